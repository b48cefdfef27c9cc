// Definitions the generated HBase Thrift2 client declares but Thrift 0.17's
// C++ generator does not emit.
//
// TServerName appears in a set<> in the IDL, so the generated struct declares
// operator< for it; Thrift 0.17 leaves the definition to the user. widen never
// builds such a set; this order (host, then port, then start code, each
// unset field first) only has to be a strict weak order.
#include "hbase_types.h"

#include <tuple>

namespace apache::hadoop::hbase::thrift2 {

bool TServerName::operator<(const TServerName& other) const {
  auto key = [](const TServerName& s) {
    return std::make_tuple(s.hostName, s.__isset.port, s.__isset.port ? s.port : 0,
                           s.__isset.startCode, s.__isset.startCode ? s.startCode : 0);
  };
  return key(*this) < key(other);
}

}  // namespace apache::hadoop::hbase::thrift2
