// widen_store_bench: the store limit (b) of the benchmark (issue 6).
//
// Takes the cells that `widen migrate` wrote into an embedded store, holds
// them in memory (pre-made, so that nothing but writing is timed), and writes
// them again into a new, empty store in one of two ways:
//
//   --mode sink   through widen's own LevelDbStore: CreateTable, NewSink, one
//                 Put per cell, Close. The sink buffers StoreOptions'
//                 batch_bytes (4 MiB), sorts each batch and writes it as one
//                 unsynced leveldb::WriteBatch (through LevelDB's log and
//                 memtable: StoreOptions::write_table_files off); Close
//                 syncs. Same code, same leveldb::Options as widen, by
//                 construction.
//   --mode files  the same sink as widen migrate uses it: the cells into
//                 LevelDB table files directly, added to the database at
//                 Close (docs/format.md, "Table files written directly").
//   --mode raw    the already-encoded LevelDB keys and values (copied verbatim
//                 from the source database, so the same bytes), in key order,
//                 through a bare leveldb::DB opened with the options that
//                 store/leveldb_store.cc sets (printed below), in WriteBatches
//                 of --batch-bytes of keys + values; one synced empty write at
//                 the end, as the sink's Close does.
//
// Cells arrive in key order (HBase cell order), i.e. in sorted batches.
//
// With --to hbase://HOST:PORT (mode sink only) the cells go through widen's
// HBaseStore sink instead, into a table of that HBase which must not exist
// yet (bench/hbase.sh drops it first): --writers requests in flight, each
// of at most --request-cells cells and --request-bytes bytes (widen
// migrate's defaults otherwise). The table is created with the source
// store's descriptor (no split points).
//
// Prints one line of key=value pairs on stdout:
//   mode=sink tables=1 rows=... cells=... bytes=... seconds=...
//     preload_bytes=... rss_before_kb=... hwm_after_kb=... cpu_seconds=...
// where bytes counts row + family + qualifier + value of every cell (widen's
// summary measure) and rss_before_kb/hwm_after_kb bracket the timed phase
// (the peak RSS of writing is about hwm_after_kb - rss_before_kb on top of the
// preloaded cells; VmHWM is reset when the timed phase starts); cpu_seconds
// is the user + system time of all threads (LevelDB's compaction thread
// included) in the timed phase.
//
// Usage: widen_store_bench --from SRC_DIR --to DST_DIR [--mode sink|files|raw]
//                          [--batch-bytes N]
//        widen_store_bench --from SRC_DIR --to hbase://HOST:PORT
//                          [--writers N] [--request-cells N] [--request-bytes N]
// DST_DIR must not exist. Exit status 0 on success, 1 on any error.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "common/cell.h"
#include "store/leveldb_format_internal.h"
#include "store/leveldb_store.h"
#include "store/store.h"

namespace {

// The options every widen store is opened with (store/leveldb_format_internal.h).
using widen::leveldb_format::kBlockCacheBytes;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "widen_store_bench: %s\n", what.c_str());
  std::exit(1);
}

// A /proc/self/status field in kB (VmRSS, VmHWM).
long ProcStatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::strtol(line.c_str() + n + 1, nullptr, 10);
    }
  }
  return -1;
}

// Resets the process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0),
// so that the peak measured afterwards belongs to the timed phase alone and
// not to the preloading (whose buffers grow by doubling).
void ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}

// User + system CPU seconds of the whole process (every thread) so far.
double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Cells of one table, owned: all bytes in one arena, offsets in `cells`.
// Like widen::CellBatch, but with 64-bit offsets: a whole table's cells
// (4.5 GiB at S = 5,000,000) exceed CellBatch's 32-bit arena offsets, which
// are sized for one 4 MiB write batch.
struct PreloadedTable {
  widen::TableDescriptor descriptor;
  struct Entry {
    size_t offset;
    uint32_t row_len, family_len, qualifier_len, value_len;
    int64_t timestamp_ms;
    widen::CellType type;
  };
  std::string arena;
  std::vector<Entry> cells;
  uint64_t rows = 0;
  uint64_t bytes = 0;

  widen::CellView View(const Entry& e) const {
    const char* p = arena.data() + e.offset;
    widen::CellView v;
    v.row = std::string_view(p, e.row_len);
    p += e.row_len;
    v.family = std::string_view(p, e.family_len);
    p += e.family_len;
    v.qualifier = std::string_view(p, e.qualifier_len);
    p += e.qualifier_len;
    v.value = std::string_view(p, e.value_len);
    v.timestamp_ms = e.timestamp_ms;
    v.type = e.type;
    return v;
  }
};

// Every table of the store at `dir` with all its cells (every version).
std::vector<PreloadedTable> PreloadCells(const std::string& dir) {
  widen::StoreOptions so;
  so.create_if_missing = false;
  auto store = widen::LevelDbStore::Open(dir, so);
  if (!store.ok()) Die(store.status().message());
  auto tables = (*store)->ListTables();
  if (!tables.ok()) Die(tables.status().message());
  std::vector<PreloadedTable> out;
  for (const widen::TableDescriptor& d : *tables) {
    PreloadedTable t;
    t.descriptor = d;
    widen::ReadOptions ro;
    ro.max_versions = 1 << 30;
    auto reader = (*store)->NewReader(d.FullName(), ro);
    if (!reader.ok()) Die(reader.status().message());
    std::string last_row;
    for (; (*reader)->Valid(); (*reader)->Next()) {
      const widen::CellView c = (*reader)->cell();
      PreloadedTable::Entry e;
      e.offset = t.arena.size();
      e.row_len = static_cast<uint32_t>(c.row.size());
      e.family_len = static_cast<uint32_t>(c.family.size());
      e.qualifier_len = static_cast<uint32_t>(c.qualifier.size());
      e.value_len = static_cast<uint32_t>(c.value.size());
      e.timestamp_ms = c.timestamp_ms;
      e.type = c.type;
      t.arena.append(c.row).append(c.family).append(c.qualifier).append(c.value);
      t.cells.push_back(e);
      t.bytes += c.row.size() + c.family.size() + c.qualifier.size() + c.value.size();
      if (t.cells.size() == 1 || c.row != last_row) {
        ++t.rows;
        last_row.assign(c.row);
      }
    }
    if (!(*reader)->status().ok()) Die((*reader)->status().message());
    out.push_back(std::move(t));
  }
  return out;
}

leveldb::Options WidenLevelDbOptions(leveldb::Cache* cache) {
  leveldb::Options lo = widen::leveldb_format::StoreOptions(cache);
  lo.create_if_missing = true;
  return lo;
}

void PrintOptions(FILE* out) {
  leveldb::Options lo = WidenLevelDbOptions(nullptr);
  std::fprintf(out,
               "leveldb options: compression=snappy write_buffer_size=%zu block_cache=LRU(%zu) "
               "max_file_size=%zu block_size=%zu block_restart_interval=%d max_open_files=%d "
               "filter_policy=none paranoid_checks=%d reuse_logs=%d; writes sync=false, "
               "one sync=true write at the end\n",
               lo.write_buffer_size, kBlockCacheBytes, lo.max_file_size, lo.block_size,
               lo.block_restart_interval, lo.max_open_files, lo.paranoid_checks ? 1 : 0,
               lo.reuse_logs ? 1 : 0);
}

bool IsHBase(const std::string& to) { return to.rfind("hbase://", 0) == 0; }

int RunSink(const std::string& from, const std::string& to, const widen::StoreOptions& so) {
  std::vector<PreloadedTable> tables = PreloadCells(from);
  uint64_t rows = 0, cells = 0, bytes = 0, preload = 0;
  for (const auto& t : tables) {
    rows += t.rows;
    cells += t.cells.size();
    bytes += t.bytes;
    preload += t.arena.size() + t.cells.size() * sizeof(PreloadedTable::Entry);
  }
  ResetPeakRss();
  const long rss_before = ProcStatusKb("VmRSS");
  const double cpu_before = CpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  {
    auto store = widen::Store::Open(IsHBase(to) ? to : "leveldb:" + to, so);
    if (!store.ok()) Die(store.status().message());
    for (const auto& t : tables) {
      if (widen::Status s = (*store)->CreateTable(t.descriptor); !s.ok()) Die(s.message());
      auto sink = (*store)->NewSink(t.descriptor.FullName());
      if (!sink.ok()) Die(sink.status().message());
      for (const auto& e : t.cells) {
        if (widen::Status s = (*sink)->Put(t.View(e)); !s.ok()) Die(s.message());
      }
      if (widen::Status s = (*sink)->Close(); !s.ok()) Die(s.message());
    }
  }  // the store closes here, as at the end of widen migrate
  const double secs = Seconds(start);
  std::printf(
      "mode=%s tables=%zu rows=%llu cells=%llu bytes=%llu seconds=%.3f preload_bytes=%llu "
      "rss_before_kb=%ld hwm_after_kb=%ld cpu_seconds=%.3f writers=%d\n",
      so.write_table_files ? "files" : "sink", tables.size(), static_cast<unsigned long long>(rows),
      static_cast<unsigned long long>(cells), static_cast<unsigned long long>(bytes), secs,
      static_cast<unsigned long long>(preload), rss_before, ProcStatusKb("VmHWM"),
      CpuSeconds() - cpu_before, IsHBase(to) ? so.writers : 0);
  return 0;
}

int RunRaw(const std::string& from, const std::string& to, size_t batch_bytes) {
  // Counts in widen's measure, from the decoded cells.
  uint64_t rows = 0, cells = 0, bytes = 0;
  {
    std::vector<PreloadedTable> tables = PreloadCells(from);
    for (const auto& t : tables) {
      rows += t.rows;
      cells += t.cells.size();
      bytes += t.bytes;
    }
  }
  // Every key/value of the source database, verbatim, in key order.
  std::string arena;
  std::vector<std::pair<size_t, uint32_t>> keys, values;  // offset, length
  {
    std::unique_ptr<leveldb::Cache> cache(leveldb::NewLRUCache(kBlockCacheBytes));
    leveldb::Options lo = WidenLevelDbOptions(cache.get());
    lo.create_if_missing = false;
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(lo, from, &raw);
    if (!s.ok()) Die("opening " + from + ": " + s.ToString());
    std::unique_ptr<leveldb::DB> db(raw);
    leveldb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<leveldb::Iterator> it(db->NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      keys.emplace_back(arena.size(), static_cast<uint32_t>(it->key().size()));
      arena.append(it->key().data(), it->key().size());
      values.emplace_back(arena.size(), static_cast<uint32_t>(it->value().size()));
      arena.append(it->value().data(), it->value().size());
    }
    if (!it->status().ok()) Die("reading " + from + ": " + it->status().ToString());
  }
  const uint64_t preload = arena.size() + keys.size() * 2 * sizeof(keys[0]);
  ResetPeakRss();
  const long rss_before = ProcStatusKb("VmRSS");
  const double cpu_before = CpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  {
    std::unique_ptr<leveldb::Cache> cache(leveldb::NewLRUCache(kBlockCacheBytes));
    leveldb::Options lo = WidenLevelDbOptions(cache.get());
    lo.error_if_exists = true;
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(lo, to, &raw);
    if (!s.ok()) Die("creating " + to + ": " + s.ToString());
    std::unique_ptr<leveldb::DB> db(raw);
    leveldb::WriteBatch batch;
    leveldb::WriteOptions unsynced;
    size_t pending = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      batch.Put(leveldb::Slice(arena.data() + keys[i].first, keys[i].second),
                leveldb::Slice(arena.data() + values[i].first, values[i].second));
      pending += keys[i].second + values[i].second;
      if (pending >= batch_bytes) {
        s = db->Write(unsynced, &batch);
        if (!s.ok()) Die("writing: " + s.ToString());
        batch.Clear();
        pending = 0;
      }
    }
    if (pending > 0) {
      s = db->Write(unsynced, &batch);
      if (!s.ok()) Die("writing: " + s.ToString());
    }
    leveldb::WriteBatch empty;
    leveldb::WriteOptions sync;
    sync.sync = true;
    s = db->Write(sync, &empty);
    if (!s.ok()) Die("syncing: " + s.ToString());
  }  // the database closes here (cache after it)
  const double secs = Seconds(start);
  std::printf(
      "mode=raw tables=0 rows=%llu cells=%llu bytes=%llu seconds=%.3f preload_bytes=%llu "
      "rss_before_kb=%ld hwm_after_kb=%ld cpu_seconds=%.3f leveldb_keys=%zu\n",
      static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cells),
      static_cast<unsigned long long>(bytes), secs, static_cast<unsigned long long>(preload),
      rss_before, ProcStatusKb("VmHWM"), CpuSeconds() - cpu_before, keys.size());
  return 0;
}

void Usage() {
  std::fprintf(stderr,
               "usage: widen_store_bench --from SRC_DIR --to DST_DIR [--mode sink|files|raw] "
               "[--batch-bytes N]\n"
               "       widen_store_bench --from SRC_DIR --to hbase://HOST:PORT [--writers N] "
               "[--request-cells N] [--request-bytes N]\n"
               "       widen_store_bench --print-options\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string from, to, mode = "sink";
  size_t batch_bytes = 4 << 20;
  widen::StoreOptions so;  // widen migrate's defaults
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        Usage();
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--from") {
      from = value();
    } else if (a == "--to") {
      to = value();
    } else if (a == "--mode") {
      mode = value();
    } else if (a == "--batch-bytes") {
      batch_bytes = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--writers") {
      so.writers = std::atoi(value().c_str());
    } else if (a == "--request-cells") {
      so.request_cells = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--request-bytes") {
      so.request_bytes = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--print-options") {
      PrintOptions(stdout);
      return 0;
    } else {
      Usage();
      return 1;
    }
  }
  if (from.empty() || to.empty() || (mode != "sink" && mode != "files" && mode != "raw") ||
      batch_bytes == 0) {
    Usage();
    return 1;
  }
  if (IsHBase(to)) {
    if (mode != "sink") Die("--to hbase:// takes --mode sink only");
    so.write_table_files = false;  // an embedded store's option: printed as mode=sink
    return RunSink(from, to, so);
  }
  if (std::filesystem::exists(to)) Die(to + " exists; give a new directory");
  PrintOptions(stderr);
  if (mode == "raw") return RunRaw(from, to, batch_bytes);
  so.write_table_files = mode == "files";
  return RunSink(from, to, so);
}
