#include "tests/store/crash_env.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>
#include <leveldb/env.h>

namespace widen::testing {
namespace {

// What is known of the files written through the Env: path -> synced bytes.
struct Ledger {
  std::mutex mu;
  std::map<std::string, uint64_t> synced;
};

class TrackedFile final : public leveldb::WritableFile {
 public:
  TrackedFile(std::string path, leveldb::WritableFile* inner, Ledger* ledger, uint64_t size)
      : path_(std::move(path)), inner_(inner), ledger_(ledger), size_(size) {}
  ~TrackedFile() override { delete inner_; }

  leveldb::Status Append(const leveldb::Slice& data) override {
    leveldb::Status s = inner_->Append(data);
    if (s.ok()) size_ += data.size();
    return s;
  }
  leveldb::Status Close() override { return inner_->Close(); }
  leveldb::Status Flush() override { return inner_->Flush(); }
  leveldb::Status Sync() override {
    leveldb::Status s = inner_->Sync();
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      ledger_->synced[path_] = size_;
    }
    return s;
  }

 private:
  const std::string path_;
  leveldb::WritableFile* const inner_;
  Ledger* const ledger_;
  uint64_t size_;  // bytes appended (with those the file had)
};

class Env final : public leveldb::EnvWrapper {
 public:
  explicit Env(Ledger* ledger) : EnvWrapper(leveldb::Env::Default()), ledger_(ledger) {}

  leveldb::Status NewWritableFile(const std::string& f, leveldb::WritableFile** r) override {
    leveldb::WritableFile* inner = nullptr;
    leveldb::Status s = target()->NewWritableFile(f, &inner);
    if (!s.ok()) return s;
    {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      ledger_->synced[Key(f)] = 0;
    }
    *r = new TrackedFile(Key(f), inner, ledger_, 0);
    return s;
  }
  leveldb::Status NewAppendableFile(const std::string& f, leveldb::WritableFile** r) override {
    uint64_t size = 0;
    if (!target()->GetFileSize(f, &size).ok()) size = 0;
    leveldb::WritableFile* inner = nullptr;
    leveldb::Status s = target()->NewAppendableFile(f, &inner);
    if (!s.ok()) return s;
    {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      if (ledger_->synced.count(Key(f)) == 0) ledger_->synced[Key(f)] = size;
    }
    *r = new TrackedFile(Key(f), inner, ledger_, size);
    return s;
  }
  leveldb::Status RemoveFile(const std::string& f) override {
    leveldb::Status s = target()->RemoveFile(f);
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      ledger_->synced.erase(Key(f));
    }
    return s;
  }
  leveldb::Status RenameFile(const std::string& from, const std::string& to) override {
    leveldb::Status s = target()->RenameFile(from, to);
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      auto it = ledger_->synced.find(Key(from));
      if (it != ledger_->synced.end()) {
        const uint64_t n = it->second;
        ledger_->synced.erase(it);
        ledger_->synced[Key(to)] = n;
      } else {
        ledger_->synced.erase(Key(to));
      }
    }
    return s;
  }

  static std::string Key(const std::string& f) {
    return std::filesystem::absolute(f).lexically_normal().string();
  }

 private:
  Ledger* const ledger_;
};

}  // namespace

struct CrashEnv::Impl {
  Impl() : env_(&ledger_) {}

  bool CopyAfterCrash(const std::string& dir, const std::string& to, std::string* error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(to, ec);
    if (ec) {
      *error = "creating " + to + ": " + ec.message();
      return false;
    }
    std::lock_guard<std::mutex> lock(ledger_.mu);
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (!e.is_regular_file()) continue;
      const std::string from = Env::Key(e.path().string());
      std::ifstream in(from, std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      auto it = ledger_.synced.find(from);
      if (it != ledger_.synced.end()) {
        // LevelDB only appends: a file never holds fewer bytes than were
        // synced, or the ledger's model of the disk is wrong.
        EXPECT_LE(it->second, bytes.size()) << from << " shrank below its synced length";
        bytes.resize(std::min<size_t>(it->second, bytes.size()));
      }
      std::ofstream out(fs::path(to) / e.path().filename(), std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        *error = "writing a copy of " + from;
        return false;
      }
    }
    if (ec) {
      *error = "listing " + dir + ": " + ec.message();
      return false;
    }
    return true;
  }

  Ledger ledger_;
  Env env_;
};

CrashEnv::CrashEnv() : impl_(std::make_unique<Impl>()) {}
CrashEnv::~CrashEnv() = default;

leveldb::Env* CrashEnv::env() { return &impl_->env_; }

bool CrashEnv::CopyAfterCrash(const std::string& dir, const std::string& to, std::string* error) {
  return impl_->CopyAfterCrash(dir, to, error);
}

}  // namespace widen::testing
