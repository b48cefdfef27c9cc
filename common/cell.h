// The cell model, HBase's: a cell is (row, family, qualifier, timestamp, type,
// value). Row, qualifier and value are arbitrary bytes; family is printable.
// Timestamps are int64 milliseconds since the epoch; versions of one column sort
// newest first.
//
// CellView is a non-owning view (RocksDB's WideColumn): whoever hands one out
// says how long its bytes live. CellBatch owns the bytes of many cells in one
// arena, can sort them in HBase's cell order, and is replayed through a
// Handler (leveldb::WriteBatch + Handler).
//
// Thread safety: CellBatch is not thread safe; distinct batches are independent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace widen {

/// Cell types with HBase's KeyValue.Type codes (never change: persisted).
/// For equal (row, family, qualifier, timestamp), higher codes sort first, so a
/// delete marker is seen before the put it masks.
enum class CellType : uint8_t {
  kPut = 4,
  kDelete = 8,         // one version of a column
  kDeleteColumn = 12,  // all versions of a column up to the timestamp
  kDeleteFamily = 14,  // all columns of a family up to the timestamp
};

/// A cell as views into bytes owned elsewhere.
struct CellView {
  std::string_view row;
  std::string_view family;
  std::string_view qualifier;
  int64_t timestamp_ms = 0;
  CellType type = CellType::kPut;
  std::string_view value;
};

/// Three-way comparison in HBase's cell order: row, family, qualifier ascending
/// as unsigned bytes; timestamp descending; type code descending.
int CompareCells(const CellView& a, const CellView& b);

/// Cells whose bytes live in one arena. Views returned by Get()/ForEach stay
/// valid until the batch is modified or cleared.
class CellBatch {
 public:
  /// Receives the cells of a batch in order (leveldb::WriteBatch::Handler).
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void Cell(const CellView& cell) = 0;
  };

  /// Copies the cell's bytes into the batch.
  void Add(const CellView& cell);
  void Add(std::string_view row, std::string_view family, std::string_view qualifier,
           int64_t timestamp_ms, std::string_view value, CellType type = CellType::kPut) {
    Add(CellView{row, family, qualifier, timestamp_ms, type, value});
  }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  /// Bytes of all keys and values held (the arena's size), for flush thresholds.
  size_t bytes() const { return arena_.size(); }
  void Clear();
  /// Removes the last cell added (its bytes too). REQUIRES: !empty().
  void PopBack();

  /// REQUIRES: i < size().
  CellView Get(size_t i) const;

  /// Sorts the cells in HBase's cell order (stable for equal cells: a later
  /// Add of the same coordinates stays after the earlier one). Cells added
  /// row by row cost a sort of the rows; a sorted batch one pass.
  void Sort();

  void Iterate(Handler* handler) const;

 private:
  struct Entry {
    uint32_t offset;  // into arena_: row, family, qualifier, value back to back
    uint32_t row_len, family_len, qualifier_len, value_len;
    int64_t timestamp_ms;
    CellType type;
  };
  CellView View(const Entry& e) const;

  std::string arena_;
  std::vector<Entry> entries_;
};

}  // namespace widen
