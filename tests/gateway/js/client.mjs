// A writer that uses iceberg-js (npm), a real third-party Iceberg REST client, against a catalog
// URI: the gateway tests run it as an engine would be run, and read one JSON line per command.
//
//   node client.mjs BASE_URL WAREHOUSE COMMAND [ARGS...]
//     config                          the resolved GET /v1/config
//     namespaces                      list namespaces
//     tables NS                       list the tables of NS
//     create NS TABLE                 create a table (a one-column schema)
//     load NS TABLE                   {snapshots: [ids in log order], current}
//     append NS TABLE SNAPSHOT_ID     load, then commit one appended snapshot with that id
//                                     (assert-ref-snapshot-id on main), like an engine's append:
//                                     on CommitFailedException reloaded and retried, up to 4 times
//
// Like the Iceberg Java client, a POST answered 503 with Retry-After is sent again after that
// many seconds, unchanged (the same Idempotency-Key, which this wrapper adds as the Java client
// does), up to RETRIES times (env, default 30); iceberg-js itself neither retries nor sends keys. Every answer's X-Icewarden-Region is reported.
import { IcebergRestCatalog, IcebergError } from 'iceberg-js'

const [, , baseUrl, warehouse, command, ...args] = process.argv
const maxRetries = Number(process.env.RETRIES ?? 30)
const seen = { attempts: 0, retried: 0, regions: [], statuses: [] }

// iceberg-js parses answers with JSON.parse, which rounds integers past 2^53 and so breaks the
// 63-bit snapshot ids every JVM engine (and the lab's workload) writes: a commit on top of one
// then asserts an id that never existed. So integers of 16 digits or more travel through the
// client as strings "#big:N", and are put back as numbers in what it sends.
const BIG = '#big:'
const protectBig = (text) =>
  text.replace(/([:\[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, (_, before, digits) => `${before}"${BIG}${digits}"`)
const restoreBig = (text) => text.replace(/"#big:(-?\d+)"/g, '$1')

async function losslessFetch(input, init) {
  if (typeof init?.body === 'string') init = { ...init, body: restoreBig(init.body) }
  const response = await fetch(input, init)
  const text = await response.text()
  return new Response(text === '' ? null : protectBig(text), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

async function retryingFetch(input, init) {
  const method = (init?.method ?? 'GET').toUpperCase()
  // Like the Java client when the config advertises idempotency-key-lifetime: one key per
  // request, the same on every retry of it.
  if (method === 'POST' || method === 'DELETE') {
    const headers = new Headers(init?.headers)
    if (!headers.has('idempotency-key')) headers.set('idempotency-key', crypto.randomUUID())
    init = { ...init, headers }
  }
  for (let attempt = 0; ; attempt++) {
    seen.attempts++
    const response = await losslessFetch(input, init)
    seen.statuses.push(response.status)
    const region = response.headers.get('x-icewarden-region')
    if (region) seen.regions.push(region)
    const retryAfter = response.headers.get('retry-after')
    if (response.status !== 503 || retryAfter === null || attempt >= maxRetries) return response
    if (method === 'GET' || method === 'POST' || method === 'DELETE') {
      seen.retried++
      await new Promise((resolve) => setTimeout(resolve, Number(retryAfter) * 1000))
      continue
    }
    return response
  }
}

const catalog = new IcebergRestCatalog({ baseUrl, warehouse, fetch: retryingFetch })
const table = () => ({ namespace: args[0].split('.'), name: args[1] })

function append(metadata, id) {
  const current = metadata['current-snapshot-id']
  const parent =
    current === undefined || current === null || (typeof current === 'number' && current < 0)
      ? null
      : current
  const snapshot = {
    'snapshot-id': id,
    'sequence-number': (metadata['last-sequence-number'] ?? 0) + 1,
    'timestamp-ms': Date.now(),
    'manifest-list': `${metadata.location}/metadata/snap-${id}-iceberg-js.avro`,
    summary: { operation: 'append', 'added-data-files': '1', 'added-records': '1' },
    'schema-id': metadata['current-schema-id'] ?? 0,
  }
  if (parent !== null) snapshot['parent-snapshot-id'] = parent
  return {
    requirements: [
      { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent },
    ],
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
    ],
  }
}

async function run() {
  switch (command) {
    case 'config':
      return await catalog.loadConfig()
    case 'namespaces':
      return await catalog.listNamespaces()
    case 'tables':
      return await catalog.listTables({ namespace: args[0].split('.') })
    case 'create': {
      const m = await catalog.createTable(
        { namespace: args[0].split('.') },
        {
          name: args[1],
          schema: {
            type: 'struct',
            'schema-id': 0,
            fields: [{ id: 1, name: 'id', type: 'long', required: true }],
          },
        }
      )
      return { uuid: m['table-uuid'] }
    }
    case 'load': {
      const m = await catalog.loadTable(table())
      return {
        snapshots: (m.snapshots ?? []).map((s) => s['snapshot-id']),
        log: (m['snapshot-log'] ?? []).map((s) => s['snapshot-id']),
        current: m['current-snapshot-id'] ?? null,
      }
    }
    case 'append': {
      // As engines do (Iceberg's commit.retry.num-retries, default 4): a requirement that failed
      // because another writer committed first is retried on freshly loaded metadata. Any other
      // refusal, the gateway's OwnedByAnotherRegion included, ends the append.
      for (let attempt = 0; ; attempt++) {
        const m = await catalog.loadTable(table())
        try {
          await catalog.updateTable(table(), append(m, Number(args[2])))
          return { appended: Number(args[2]), conflicts: attempt }
        } catch (e) {
          const conflict = e instanceof IcebergError && e.icebergType === 'CommitFailedException'
          if (!conflict || attempt >= 4) throw e
        }
      }
    }
    default:
      throw new Error(`unknown command ${command}`)
  }
}

try {
  const result = await run()
  console.log(JSON.stringify({ ok: true, result, ...seen }))
} catch (e) {
  const status = e instanceof IcebergError ? e.status : 0
  const type = e instanceof IcebergError ? e.icebergType : undefined
  console.log(JSON.stringify({ ok: false, status, type, error: String(e?.message ?? e), ...seen }))
  process.exitCode = 1
}
