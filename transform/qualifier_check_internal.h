// Internals of the qualifier check (transform/qualifier_check.h), for its
// tests: the model of the bytes a nest's id can be written as.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "transform/key_codec.h"

namespace widen::qualifier_internal {

/// Whether the check's model of `codec` (a nest's id: its parts, form and
/// separator) includes exactly the bytes `bytes`. The model must include
/// every id the codec can encode (it is sound), and should include little
/// else (it is precise).
bool IdCanWrite(const KeyCodec& codec, std::string_view bytes);

}  // namespace widen::qualifier_internal
