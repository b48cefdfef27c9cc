// HBaseStore: HBase as a widen target, through its Thrift2 gateway
// (`hbase://HOST:PORT`; binary protocol, unframed transport — the gateway's
// defaults). HBase itself applies VERSIONS, MIN_VERSIONS, TTL and delete
// markers; the store creates tables from the same TableDescriptors as the
// embedded store and reads them back in the same order and shape, so
// `widen scan`/`get` print the same for both.
//
// What widen keeps in HBase besides the cells (docs/format.md): the
// descriptor's metadata as the table's METADATA (table descriptor values):
// "widen.key" (the row key layout, for `scan --decode`; "widen.state", the
// load state, only in tables an older widen loaded); and, once a table state
// is first written through
// NewStateStore, the state table (HBaseOptions::state_table): one row per
// target table, its row key the table's full name, one cell s:v holding the
// state value of store/state_store.h (and s:l, the table's lock, once a sync
// took it); once widen sync wrote a table, the sync table
// (HBaseOptions::sync_table) with its row digests and sync index, and
// NEW_VERSION_BEHAVIOR on each of the table's families (below).
//
// Writes: a sink buffers cells (BufferedCellSink: sorted, in key order) and
// sends them with putMultiple (deletes with deleteMultiple) in requests of at
// most `request_cells` cells and `request_bytes` bytes, up to `writers`
// requests in flight at once, each writer on its own connection; two
// requests that hold cells of one row (a row wider than a request) are sent
// one after the other, so the cells of a row reach HBase in order. Every
// cell carries its timestamp, so sending a request again gives the same
// table: a request that fails with a retryable error (region moving, server
// busy, a connection the gateway closed after its idle timeout) is sent
// again on a new connection of its writer, with back-off, for up to
// `retry_budget_ms`; the first error of any writer stops the sink (the
// requests not yet sent are dropped) and is returned by its next Put,
// Flush or Close.
//
// Limits checked before anything of a batch is sent (common/cell_check.h;
// InvalidArgument naming the table and row; nothing of the batch is
// written): a row key of 1 to 32,767 bytes; a cell of at most
// `max_cell_bytes` as HBase's region server counts it
// (hbase.server.keyvalue.maxsize: row + family + qualifier + value + 24); a
// timestamp >= 0; a family the table has; a known type.
//
// Durability: a request HBase acknowledged is in its region server's WAL
// (the tables' default durability, SYNC_WAL), so a sink's Sync is its Flush.
//
// Thread safety: a store may be shared by threads (its own requests are
// serialised); each reader has its own connection, each sink its writers'
// connections and threads, and each is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/cell_check.h"
#include "common/cell_sink.h"
#include "common/status.h"
#include "common/table_descriptor.h"
#include "store/state_store.h"
#include "store/store.h"

namespace widen {

namespace hbase_internal {
class HBaseConnection;
}  // namespace hbase_internal

/// HBase's limits and how widen talks to the gateway.
struct HBaseOptions {
  /// Per putMultiple request: at most this many cells ...
  size_t request_cells = kDefaultRequestCells;
  /// ... and this many bytes of row + family + qualifier + value.
  size_t request_bytes = kDefaultRequestBytes;
  /// Requests in flight per sink at most, each on its own connection to the
  /// gateway (1 to kMaxWriters).
  int writers = kDefaultWriters;
  /// The largest cell HBase takes, as its region server counts it (row +
  /// family + qualifier + value + 24): hbase.server.keyvalue.maxsize, and
  /// the gateway's hbase.client.keyvalue.maxsize, both 10 MiB by default.
  /// 0 = no check.
  int64_t max_cell_bytes = kHBaseMaxCellBytes;
  int connect_timeout_ms = 10000;
  /// Per request; the gateway retries region moves for minutes before it
  /// answers, so this is long.
  int rpc_timeout_ms = 300000;
  /// Time spent re-sending one failed request before the error is returned.
  int retry_budget_ms = 120000;
  /// Results (rows, or parts of wide rows) fetched per scanner round trip,
  /// and cells per result at most.
  int scan_rows = 100;
  int scan_cells_per_result = 100;
  /// The table that holds the table states ("ns:table"); created, with one
  /// family "s" of VERSIONS 1, when the first state is written. Left out of
  /// ListTables.
  std::string state_table = "widen:state";
  /// The table that holds what widen sync keeps beside the rows of every
  /// table it writes (their digests and sync indexes; docs/format.md,
  /// "HBase"); created, with one family "s" of VERSIONS 1, by the first
  /// RowWriter. Left out of ListTables.
  std::string sync_table = "widen:sync";
  /// A table lock (NewStateStore, LockTable) lasts this long unless its
  /// holder renews it (every third of it): a holder killed on another
  /// machine blocks the table this long at most.
  int lock_lease_ms = 60000;
  /// Rows a RowWriter replaces per round of requests, at most (also bounded
  /// by request_cells and request_bytes).
  size_t sync_batch_rows = 1000;
};

class HBaseStore final : public Store {
 public:
  /// Connects to the gateway at `url` (hbase://HOST:PORT) and checks that it
  /// is a Thrift2 gateway. InvalidArgument for a malformed URL; Unavailable
  /// when the gateway cannot be reached or does not speak Thrift2 in binary
  /// protocol without framing.
  static Result<std::unique_ptr<HBaseStore>> Open(const std::string& url,
                                                  const StoreOptions& options,
                                                  const HBaseOptions& hbase = HBaseOptions());

  ~HBaseStore() override;
  HBaseStore(const HBaseStore&) = delete;
  HBaseStore& operator=(const HBaseStore&) = delete;

  /// Creates the namespace when missing, then the table with every family
  /// option, the split points and the metadata as table METADATA. If the
  /// table exists: OK when its families, their options and its metadata
  /// (widen.state aside) are the same, else FailedPrecondition naming the
  /// first difference (split points are not compared). InvalidArgument for
  /// an invalid descriptor or a TTL above 2147483647 s.
  Status CreateTable(const TableDescriptor& descriptor) override;
  /// The table as HBase describes it (getTableDescriptor): families and
  /// options, metadata (every table METADATA value), and as split points the
  /// start keys of its regions now. NotFound if it does not exist.
  Result<TableDescriptor> DescribeTable(const std::string& full_name) override;
  /// Alters the table's METADATA (modifyTable with one value changed).
  Status SetTableMetadata(const std::string& full_name, const std::string& key,
                          const std::string& value) override;
  /// Every user table (not the 'hbase' namespace, not the state or sync
  /// table), ordered by full name; a table that another client drops (or
  /// disables) meanwhile is left out.
  Result<std::vector<TableDescriptor>> ListTables() override;
  /// A sink writing to the table (see above); NotFound for an unknown table.
  /// Sync() and Close() flush: HBase keeps what it acknowledged.
  Result<std::unique_ptr<CellSink>> NewSink(const std::string& full_name) override;
  /// A scanner over the table: start_row, stop_row and row_prefix all apply,
  /// max_versions per column (HBase caps it at the family's VERSIONS),
  /// limit_rows rows. HBase applies TTL with its own clock: now_ms is not
  /// used. A scanner that fails mid-way (dropped connection, expired
  /// scanner) is reopened after the last cell returned. NotFound for an
  /// unknown table; InvalidArgument when max_versions < 1.
  Result<std::unique_ptr<CellReader>> NewReader(const std::string& full_name,
                                                const ReadOptions& options) override;

  /// The table states, in the state table (see above), on a connection of
  /// their own. Get and List of a state table that does not exist find no
  /// state; the first Put creates it (and its namespace). Put and Delete are
  /// one checkAndMutate on the table's row, comparing the cell s:v with the
  /// bytes just read; after a lost answer the row is read again to learn
  /// whether the write happened. LockTable keeps a lease in the cell s:l of
  /// the table's row (store/hbase_lock.cc), taken and renewed with
  /// checkAndMutate.
  Result<std::unique_ptr<StateStore>> NewStateStore() override;

  /// HBaseOptions::max_cell_bytes.
  int64_t max_cell_bytes() const override { return hbase_.max_cell_bytes; }

  // widen sync (store/hbase_row_sync.cc; the layout in docs/format.md,
  // "HBase"). Digests and sync index entries are rows of the sync table
  // (HBaseOptions::sync_table) keyed by the table's full name, 0x00 and a
  // tag; every cell of it carries a timestamp from a counter of the table
  // that only grows (a writer takes a range of 2^32 with one increment), so
  // a request re-sent after a lost answer, or applied late, never masks a
  // later write. Rows are replaced in rounds of requests, each round
  // waiting for the one before: the stored cells of the rows whose
  // coordinates may change, read with getMultiple (keys only); then (1) the
  // sync index's new entries and an empty digest for every row of the
  // round ("being written"); (2) DeleteColumns markers for the stored
  // columns the new row lacks, or whose versions it does not all give
  // again; (3) the new cells; (4) the rows' digests; (5) the digests of
  // removed rows and the removed index entries. A crash leaves each row of
  // a round with an empty digest (rewritten by the next sync) or done.
  // HBase masks a put only with a delete marker written before it once the
  // family has NEW_VERSION_BEHAVIOR, which NewRowWriter sets, so a cell
  // removed by one sync and given again by a later one is seen. (HBase 2.6
  // mishandles the empty qualifier in such a family: a DeleteFamily marker
  // does not mask it, and a marker on it below a newer cell fails every
  // read of the row; so no DeleteFamily is written, and a row whose
  // empty-qualifier column would need a marker is refused.) A reader of the
  // table during a sync may see a row with part of its change (no request
  // of HBase changes several rows at once).
  bool SupportsRowSync() const override { return true; }
  /// The table's rows with a digest entry in the sync table, in row key
  /// order (one scan); with `from_cells`, also every row that holds a cell
  /// (a scan of the table, first key of each row only), every digest empty.
  /// NotFound for an unknown table.
  Result<std::unique_ptr<RowDigestReader>> NewDigestReader(const std::string& full_name,
                                                           bool from_cells) override;
  /// Creates the sync table when missing and sets NEW_VERSION_BEHAVIOR on
  /// the table's families that lack it (one modifyTable). NotFound for an
  /// unknown table. ReplaceRow and Flush: InvalidArgument naming the table,
  /// row and column for a row whose empty-qualifier column would need a
  /// delete marker (above).
  Result<std::unique_ptr<RowWriter>> NewRowWriter(const std::string& full_name) override;
  /// getMultiple of the rows' digest entries, 1,000 per request.
  Result<std::unique_ptr<RowDigestReader>> NewDigestReaderOf(
      const std::string& full_name, std::vector<std::string> rows) override;
  /// Scans of the sync table: all prefixes, when they are sorted and none
  /// starts with another, in one scan (a MultiRowRangeFilter of up to 1,000
  /// ranges per scan), else one scan per prefix; getScannerResults of up to
  /// scan_rows rows per round trip.
  Status ScanIndex(const std::string& full_name, const std::vector<std::string>& prefixes,
                   const std::function<bool(size_t prefix, std::string_view key,
                                            std::string_view value)>& fn) override;
  using Store::ScanIndex;

  /// "hbase://HOST:PORT".
  const std::string& url() const { return url_; }

 private:
  HBaseStore(std::string url, std::string host, int port, const StoreOptions& options,
             const HBaseOptions& hbase);
  std::unique_ptr<hbase_internal::HBaseConnection> NewConnection() const;
  /// NotFound unless table `name` exists. REQUIRES: mu_ held.
  Status CheckExists(const std::string& name);
  /// Whether the sync table exists (store/hbase_row_sync.cc).
  Result<bool> SyncTableExists();

  const std::string url_;
  const std::string host_;
  const int port_;
  const StoreOptions options_;
  const HBaseOptions hbase_;
  std::mutex mu_;  // guards conn_
  std::unique_ptr<hbase_internal::HBaseConnection> conn_;
};

}  // namespace widen
