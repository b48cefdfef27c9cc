// HBaseDdl: HBase shell statements that create target tables as widen
// describes them (TableDescriptor) — the same descriptors widen uses when it
// creates a table itself — for `widen ddl`, to paste into `hbase shell` or
// run with `hbase shell -n FILE`:
//
//   create_namespace 'music'
//   create 'music:artists',
//     {NAME => 'd', VERSIONS => 1, MIN_VERSIONS => 0, TTL => 2147483647,
//      COMPRESSION => 'NONE', BLOOMFILTER => 'ROW', BLOCKSIZE => 65536,
//      IN_MEMORY => 'false', DATA_BLOCK_ENCODING => 'NONE'},
//     {SPLITS => ['\x01', '\x02'], METADATA => {'widen.key' => '{...}'}}
//
// Syntax as hbase-shell reads it (apache/hbase, hbase-shell/src/main/ruby:
// shell/commands/create.rb for the forms; hbase/admin.rb `create` and `hcd`
// for how each option is parsed):
//   - a family is a Hash with NAME; VERSIONS, MIN_VERSIONS and BLOCKSIZE go
//     through JInteger.valueOf, IN_MEMORY through JBoolean.valueOf, TTL to
//     setTimeToLive (seconds; 2147483647 = HConstants.FOREVER), COMPRESSION,
//     BLOOMFILTER and DATA_BLOCK_ENCODING are enum names;
//   - a Hash without NAME holds table options: SPLITS, and METADATA whose
//     key/values become the table descriptor's values;
//   - each SPLITS entry goes through Bytes.toBytesBinary, so binary split
//     points are written as single-quoted Ruby strings in HBase's printable
//     form ('\x01': Ruby keeps the backslash, toBytesBinary decodes it). A
//     double-quoted "\xFF" would instead reach Java as a (mangled) String
//     character, so widen never writes split points that way.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/table_descriptor.h"

namespace widen {

struct HBaseDdlOptions {
  bool create_namespaces = true;  // a create_namespace for each namespace but 'default'
  bool metadata = true;           // the table's METADATA (widen.key: the row key layout)
};

/// create_namespace (once per namespace) and create statements for `tables`,
/// each statement ending in a newline. REQUIRES: every descriptor is valid.
std::string HBaseShellDdl(const std::vector<TableDescriptor>& tables,
                          const HBaseDdlOptions& options = {});

/// The `create` statement of one table.
std::string HBaseShellCreate(const TableDescriptor& table, const HBaseDdlOptions& options = {});

/// `s` as a single-quoted Ruby string literal: \ and ' escaped.
std::string RubyQuote(std::string_view s);

/// A row key as a single-quoted Ruby string that Bytes.toBytesBinary turns
/// back into exactly `bytes` ('\x00\x01', 'A100|00001'; a quote as \x27).
std::string RubyBinaryLiteral(std::string_view bytes);

}  // namespace widen
