// The lab's starting catalog: namespaces sales, sales.archive, clickstream and eu in every region,
// and a handful of tables per namespace (plus --seed-tables N more, spread over the namespaces),
// each created in its owning region and left to replication to reach the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "examples/lab/lab_region.h"
#include "examples/lab/ownership.h"

namespace icewarden::lab {

// The seeded tables the workload generator appends to.
std::vector<TableIdent> WorkloadTables();

// Creates missing namespaces in every region and, for every seed table that no region has yet,
// the table in its owner. Safe to run on every start: existing data is left alone.
void SeedRegions(const std::vector<LabRegion*>& regions, Ownership& ownership,
                 const std::string& base_location, int extra_tables, int64_t now_ms);

}  // namespace icewarden::lab
