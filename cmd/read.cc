// widen scan / widen get: read a target table and print it as HBase's shell does.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cmd/commands.h"
#include "cmd/exit_codes.h"
#include "cmd/shard_load.h"
#include "common/bytes.h"
#include "common/table_descriptor.h"
#include "mapping/mapping.h"
#include "store/shell_printer.h"
#include "store/state_store.h"
#include "store/store.h"
#include "transform/key_codec.h"
#include "transform/plan.h"

namespace widen {

namespace {

int Fail(const Status& s) {
  std::fprintf(stderr, "widen: %s\n", s.message().c_str());
  return ExitCodeFor(s);
}

// The store URL: --target, else the mapping's target.
Result<std::string> ResolveTarget(const ReadOptionsCli& o) {
  if (!o.target_url.empty()) return o.target_url;
  if (!o.mapping_path.empty()) {
    WIDEN_ASSIGN_OR_RETURN(Mapping mapping, load_mapping(o.mapping_path));
    WIDEN_RETURN_IF_ERROR(mapping.target_problem);
    if (!mapping.target_url.empty()) return mapping.target_url;
  }
  return Status::InvalidArgument(
      "no target: pass --target leveldb:PATH (or hbase://HOST:PORT) or -m mapping.yaml");
}

Result<std::string> ParseRowArg(const char* what, const std::string& text) {
  std::string bytes;
  if (!FromStringBinary(text, &bytes)) {
    return Status::InvalidArgument(fmt::format("{} '{}': malformed \\xNN escape", what, text));
  }
  return bytes;
}

// An open store and the descriptor of the table to read.
struct OpenTable {
  std::unique_ptr<Store> store;
  TableDescriptor descriptor;
};

Result<OpenTable> Open(const ReadOptionsCli& o) {
  WIDEN_ASSIGN_OR_RETURN(std::string target, ResolveTarget(o));
  StoreOptions so;
  so.create_if_missing = false;
  OpenTable t;
  WIDEN_ASSIGN_OR_RETURN(t.store, Store::Open(target, so));
  WIDEN_ASSIGN_OR_RETURN(t.descriptor, t.store->DescribeTable(o.table));
  // The table's state (store/state_store.h); a store written before state
  // records existed keeps it in the table's metadata, where `widen repair`
  // also marks a table that may lack cells.
  WIDEN_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> states, t.store->NewStateStore());
  WIDEN_ASSIGN_OR_RETURN(std::optional<TableState> state, states->Get(t.descriptor.FullName()));
  auto marked = t.descriptor.metadata.find(kStateMetadata);
  const bool has_mark = marked != t.descriptor.metadata.end();
  bool incomplete = false;
  if (state) {
    incomplete = state->status != TableStatus::kComplete;
  } else {
    incomplete = has_mark && marked->second != "complete";
  }
  if (has_mark && marked->second == "repaired") {
    std::fprintf(stderr,
                 "widen: warning: table '%s' was repaired (widen repair) and may lack cells: run "
                 "widen migrate into this store to write them again\n",
                 o.table.c_str());
  } else if (incomplete) {
    std::fprintf(stderr, "widen: warning: table '%s' is incomplete: %s\n", o.table.c_str(),
                 IncompleteReason(states.get(), t.descriptor.FullName(), state).c_str());
  }
  return t;
}

// The row key layout widen stored with the table when it created it.
Result<KeyCodec> KeyLayout(const TableDescriptor& d) {
  auto it = d.metadata.find(kKeyLayoutMetadata);
  if (it == d.metadata.end()) {
    return Status::NotFound(
        fmt::format("table '{}' has no stored row key layout to decode with", d.FullName()));
  }
  return KeyCodec::FromJson(it->second);
}

std::string DecodedKey(const KeyCodec& codec, std::string_view row) {
  std::vector<std::pair<std::string, std::string>> named;
  if (!codec.Decode(row, &named)) return ToStringBinary(row);
  std::string s;
  for (const auto& [name, text] : named) {
    if (!s.empty()) s += ' ';
    s += name + "=" + text;
  }
  return s;
}

ShellPrinterOptions PrinterOptions() {
  ShellPrinterOptions po;
  if (!isatty(STDOUT_FILENO)) po.first_column_width = 0;
  return po;
}

}  // namespace

int RunScan(const ReadOptionsCli& o) {
  auto table = Open(o);
  if (!table.ok()) return Fail(table.status());
  ReadOptions ro;
  ro.limit_rows = o.limit;
  ro.max_versions = o.versions;
  auto prefix = ParseRowArg("--prefix", o.prefix);
  auto start = ParseRowArg("--start-row", o.start_row);
  auto stop = ParseRowArg("--stop-row", o.stop_row);
  for (const auto* r : {&prefix, &start, &stop}) {
    if (!r->ok()) return Fail(r->status());
  }
  ro.row_prefix = *prefix;
  ro.start_row = *start;
  ro.stop_row = *stop;

  ShellPrinterOptions po = PrinterOptions();
  KeyCodec codec;
  if (o.decode) {
    auto layout = KeyLayout(table->descriptor);
    if (!layout.ok()) return Fail(layout.status());
    codec = std::move(*layout);
    po.render_row = [&codec](std::string_view row) { return DecodedKey(codec, row); };
  }
  auto reader = table->store->NewReader(o.table, ro);
  if (!reader.ok()) return Fail(reader.status());
  ShellPrinter printer(std::cout, ShellFormat::kScan, po);
  Status s = printer.PrintAll(reader->get());
  std::cout.flush();
  return s.ok() ? kExitOk : Fail(s);
}

int RunGet(const ReadOptionsCli& o) {
  auto table = Open(o);
  if (!table.ok()) return Fail(table.status());
  auto row = ParseRowArg("row", o.row);
  if (!row.ok()) return Fail(row.status());
  if (o.decode) {
    auto layout = KeyLayout(table->descriptor);
    if (!layout.ok()) return Fail(layout.status());
    std::cout << "ROW " << DecodedKey(*layout, *row) << "\n";
  }
  ReadOptions ro;
  ro.start_row = *row;
  ro.stop_row = *row + std::string(1, '\0');
  ro.limit_rows = 1;
  ro.max_versions = o.versions;
  auto reader = table->store->NewReader(o.table, ro);
  if (!reader.ok()) return Fail(reader.status());
  ShellPrinter printer(std::cout, ShellFormat::kGet, PrinterOptions());
  Status s = printer.PrintAll(reader->get());
  std::cout.flush();
  return s.ok() ? kExitOk : Fail(s);
}

}  // namespace widen
