// widen scan / widen get: read a target table and print it as HBase's shell does.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cmd/commands.h"
#include "cmd/exit_codes.h"
#include "common/bytes.h"
#include "mapping/mapping.h"
#include "store/shell_printer.h"
#include "store/store.h"
#include "transform/key_codec.h"
#include "transform/plan.h"

namespace widen {

namespace {

int Fail(const Status& s) {
  std::fprintf(stderr, "widen: %s\n", s.message().c_str());
  return ExitCodeFor(s);
}

// Resolves the target URL and, when a mapping is given, the table's mapping.
Status ResolveTarget(const ReadOptionsCli& o, std::string* target, Mapping* mapping) {
  *target = o.target_url;
  if (!o.mapping_path.empty()) {
    WIDEN_ASSIGN_OR_RETURN(*mapping, load_mapping(o.mapping_path));
    if (target->empty()) {
      WIDEN_RETURN_IF_ERROR(mapping->target_problem);
      *target = mapping->target_url;
    }
  }
  if (target->empty()) {
    return Status::InvalidArgument("no target: pass --target leveldb:PATH or -m mapping.yaml");
  }
  return Status::OK();
}

Result<std::string> ParseRowArg(const char* what, const std::string& text) {
  std::string bytes;
  if (!FromStringBinary(text, &bytes)) {
    return Status::InvalidArgument(fmt::format("{} '{}': malformed \\xNN escape", what, text));
  }
  return bytes;
}

Result<std::unique_ptr<CellReader>> OpenReader(const std::string& target, const std::string& table,
                                               const ReadOptions& ro) {
  StoreOptions so;
  so.create_if_missing = false;
  WIDEN_ASSIGN_OR_RETURN(auto store, Store::Open(target, so));
  WIDEN_ASSIGN_OR_RETURN(auto reader, store->NewReader(table, ro));
  // The reader keeps what it needs of the store alive (see store.h).
  return reader;
}

// The row key layout widen stored with the table when it created it.
Result<KeyCodec> KeyLayout(const std::string& target, const std::string& table) {
  StoreOptions so;
  so.create_if_missing = false;
  WIDEN_ASSIGN_OR_RETURN(auto store, Store::Open(target, so));
  WIDEN_ASSIGN_OR_RETURN(TableDescriptor d, store->DescribeTable(table));
  auto it = d.metadata.find(kKeyLayoutMetadata);
  if (it == d.metadata.end()) {
    return Status::NotFound(
        fmt::format("table '{}' has no stored row key layout to decode with", table));
  }
  return KeyCodec::FromJson(it->second);
}

ShellPrinterOptions PrinterOptions() {
  ShellPrinterOptions po;
  if (!isatty(STDOUT_FILENO)) po.first_column_width = 0;
  return po;
}

}  // namespace

int RunScan(const ReadOptionsCli& o) {
  std::string target;
  Mapping mapping;
  if (Status s = ResolveTarget(o, &target, &mapping); !s.ok()) return Fail(s);
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
    auto layout = KeyLayout(target, o.table);
    if (!layout.ok()) return Fail(layout.status());
    codec = std::move(*layout);
    po.render_row = [&codec](std::string_view row) {
      std::vector<std::pair<std::string, std::string>> named;
      if (!codec.Decode(row, &named)) return ToStringBinary(row);
      std::string s;
      for (const auto& [name, text] : named) {
        if (!s.empty()) s += ' ';
        s += name + "=" + text;
      }
      return s;
    };
  }
  auto reader = OpenReader(target, o.table, ro);
  if (!reader.ok()) return Fail(reader.status());
  ShellPrinter printer(std::cout, ShellFormat::kScan, po);
  Status s = printer.PrintAll(reader->get());
  std::cout.flush();
  return s.ok() ? kExitOk : Fail(s);
}

int RunGet(const ReadOptionsCli& o) {
  std::string target;
  Mapping mapping;
  if (Status s = ResolveTarget(o, &target, &mapping); !s.ok()) return Fail(s);
  auto row = ParseRowArg("row", o.row);
  if (!row.ok()) return Fail(row.status());
  ReadOptions ro;
  ro.start_row = *row;
  ro.stop_row = *row + std::string(1, '\0');
  ro.limit_rows = 1;
  ro.max_versions = o.versions;
  auto reader = OpenReader(target, o.table, ro);
  if (!reader.ok()) return Fail(reader.status());
  if (o.decode) {
    auto layout = KeyLayout(target, o.table);
    if (!layout.ok()) return Fail(layout.status());
    std::vector<std::pair<std::string, std::string>> named;
    if (layout->Decode(*row, &named)) {
      std::string s;
      for (const auto& [name, text] : named) s += (s.empty() ? "" : " ") + name + "=" + text;
      std::cout << "ROW " << s << "\n";
    }
  }
  ShellPrinter printer(std::cout, ShellFormat::kGet, PrinterOptions());
  Status s = printer.PrintAll(reader->get());
  std::cout.flush();
  return s.ok() ? kExitOk : Fail(s);
}

}  // namespace widen
