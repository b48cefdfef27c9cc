#include "tests/store/compaction_race_env.h"

#include <gtest/gtest.h>
#include <leveldb/env.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>

namespace widen::testing {

namespace {

constexpr std::chrono::seconds kWait{3};

bool IsTableFile(const std::string& f) {
  auto ends = [&](const char* ext) {
    const std::string e(ext);
    return f.size() >= e.size() && f.compare(f.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".ldb") || ends(".sst");
}

struct Order {
  std::mutex mu;
  std::condition_variable cv;
  bool query_began = false;  // a size query of a table file is waiting
  bool removed = false;      // a table file was removed since
  bool done = false;         // the first query has returned
  bool raced = false;
  std::set<std::string> removed_files;  // table files removed so far
};

class Env final : public leveldb::EnvWrapper {
 public:
  explicit Env(Order* order) : EnvWrapper(leveldb::Env::Default()), order_(order) {}

  leveldb::Status GetFileSize(const std::string& f, uint64_t* size) override {
    if (IsTableFile(f)) {
      std::unique_lock<std::mutex> lock(order_->mu);
      if (!order_->done) {
        order_->query_began = true;
        order_->cv.notify_all();
        order_->raced = order_->cv.wait_for(lock, kWait, [&] { return order_->removed; });
        order_->done = true;
      }
      // The model: a file this Env removed is gone, so its size cannot be
      // read (else the staged race would be no race).
      if (order_->removed_files.count(f)) {
        leveldb::Status s = target()->GetFileSize(f, size);
        EXPECT_FALSE(s.ok()) << f << " was removed, yet its size reads as " << *size;
        return s;
      }
    }
    return target()->GetFileSize(f, size);
  }

  leveldb::Status RemoveFile(const std::string& f) override {
    if (IsTableFile(f)) {
      std::unique_lock<std::mutex> lock(order_->mu);
      if (!order_->done) order_->cv.wait_for(lock, kWait, [&] { return order_->query_began; });
      leveldb::Status s = target()->RemoveFile(f);
      EXPECT_TRUE(s.ok()) << s.ToString();
      EXPECT_FALSE(target()->FileExists(f)) << f << " is still there after its removal";
      order_->removed_files.insert(f);
      order_->removed = true;
      order_->cv.notify_all();
      return s;
    }
    return target()->RemoveFile(f);
  }

 private:
  Order* const order_;
};

}  // namespace

struct CompactionRaceEnv::Impl {
  Impl() : env(&order) {}
  Order order;
  Env env;
};

CompactionRaceEnv::CompactionRaceEnv() : impl_(new Impl()) {}
CompactionRaceEnv::~CompactionRaceEnv() = default;
leveldb::Env* CompactionRaceEnv::env() { return &impl_->env; }
bool CompactionRaceEnv::raced() const {
  std::lock_guard<std::mutex> lock(impl_->order.mu);
  return impl_->order.raced;
}

}  // namespace widen::testing
