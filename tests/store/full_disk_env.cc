#include "tests/store/full_disk_env.h"

#include <atomic>
#include <string>

#include <gtest/gtest.h>
#include <leveldb/env.h>

namespace widen::testing {
namespace {

// Counts write calls; false once the disk is full.
struct Budget {
  explicit Budget(int allowed) : allowed(allowed) {}
  bool Take() {
    const int n = seen.fetch_add(1);
    return allowed < 0 || n < allowed;
  }
  const int allowed;
  std::atomic<int> seen{0};
};

leveldb::Status Full(const std::string& what) {
  return leveldb::Status::IOError(what, "No space left on device");
}

// A write the simulated disk allowed must succeed on the real one: a real
// failure would pass for the simulated full disk and prove nothing.
leveldb::Status Allowed(const std::string& what, leveldb::Status s) {
  EXPECT_TRUE(s.ok()) << "the real disk refused " << what
                      << ", a write the simulated disk allowed: " << s.ToString();
  return s;
}

class File final : public leveldb::WritableFile {
 public:
  File(std::string name, leveldb::WritableFile* inner, Budget* budget)
      : name_(std::move(name)), inner_(inner), budget_(budget) {}
  ~File() override { delete inner_; }
  leveldb::Status Append(const leveldb::Slice& data) override {
    return budget_->Take() ? Allowed(name_, inner_->Append(data)) : Full(name_);
  }
  leveldb::Status Close() override { return inner_->Close(); }
  leveldb::Status Flush() override {
    return budget_->Take() ? Allowed(name_, inner_->Flush()) : Full(name_);
  }
  leveldb::Status Sync() override {
    return budget_->Take() ? Allowed(name_, inner_->Sync()) : Full(name_);
  }

 private:
  const std::string name_;
  leveldb::WritableFile* const inner_;
  Budget* const budget_;
};

class Env final : public leveldb::EnvWrapper {
 public:
  explicit Env(Budget* budget) : EnvWrapper(leveldb::Env::Default()), budget_(budget) {}
  leveldb::Status NewWritableFile(const std::string& f, leveldb::WritableFile** r) override {
    if (!budget_->Take()) return Full(f);
    leveldb::WritableFile* inner = nullptr;
    leveldb::Status s = target()->NewWritableFile(f, &inner);
    if (s.ok()) *r = new File(f, inner, budget_);
    return s;
  }
  leveldb::Status NewAppendableFile(const std::string& f, leveldb::WritableFile** r) override {
    if (!budget_->Take()) return Full(f);
    leveldb::WritableFile* inner = nullptr;
    leveldb::Status s = target()->NewAppendableFile(f, &inner);
    if (s.ok()) *r = new File(f, inner, budget_);
    return s;
  }

 private:
  Budget* const budget_;
};

}  // namespace

struct FullDiskEnv::Impl {
  explicit Impl(int allowed) : budget(allowed), env(&budget) {}
  Budget budget;
  Env env;
};

FullDiskEnv::FullDiskEnv(int writes_allowed) : impl_(new Impl(writes_allowed)) {}
FullDiskEnv::~FullDiskEnv() = default;
leveldb::Env* FullDiskEnv::env() { return &impl_->env; }
int FullDiskEnv::writes() const { return impl_->budget.seen.load(); }

}  // namespace widen::testing
