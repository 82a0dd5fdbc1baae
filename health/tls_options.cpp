#include "health/tls_options.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace icewarden {
namespace {

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;
using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Bio MemoryBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
}

// OpenSSL's reason for the last failure on this thread, and the queue cleared.
std::string LastOpenSslError(const char* fallback) {
  unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : fallback;
}

// A passphrase callback that refuses: an encrypted key cannot be read without a person.
int NoPassphrase(char*, int, int, void*) { return -1; }

}  // namespace

Status CheckCertificatesPem(const std::string& pem) {
  ERR_clear_error();
  Bio bio = MemoryBio(pem);
  int count = 0;
  while (true) {
    Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
    if (!cert) break;
    ++count;
  }
  // The loop ends at the end of the text (PEM_R_NO_START_LINE) or at a broken block.
  unsigned long last = ERR_peek_last_error();
  const bool at_end = ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
  if (count == 0) {
    ERR_clear_error();
    return Status::InvalidArgument("no PEM certificate found (want -----BEGIN CERTIFICATE-----)");
  }
  if (last != 0 && !at_end)
    return Status::InvalidArgument("certificate " + std::to_string(count + 1) +
                                   " cannot be read: " + LastOpenSslError("malformed PEM"));
  ERR_clear_error();
  return Status::Ok();
}

Status CheckPrivateKeyPem(const std::string& pem) {
  ERR_clear_error();
  Bio bio = MemoryBio(pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, &NoPassphrase, nullptr), &EVP_PKEY_free);
  if (!key) {
    return Status::InvalidArgument(
        "not an unencrypted PEM private key: " +
        LastOpenSslError("want -----BEGIN PRIVATE KEY----- or -----BEGIN RSA PRIVATE KEY-----"));
  }
  ERR_clear_error();
  return Status::Ok();
}

Status CheckKeyMatchesCertificate(const std::string& cert_pem, const std::string& key_pem) {
  ERR_clear_error();
  Bio cert_bio = MemoryBio(cert_pem);
  Cert cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr), &X509_free);
  Bio key_bio = MemoryBio(key_pem);
  Key key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, &NoPassphrase, nullptr), &EVP_PKEY_free);
  ERR_clear_error();
  if (!cert || !key) return Status::InvalidArgument("certificate or key cannot be read");
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("the private key is not the key of this certificate");
  }
  return Status::Ok();
}

}  // namespace icewarden
