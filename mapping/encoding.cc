#include "mapping/encoding.h"

namespace widen {

namespace {

constexpr EnumName<KeyForm> kKeyForms[] = {{KeyForm::kText, "text"}, {KeyForm::kBinary, "binary"}};

// Persisted in key layouts (KeyCodec::ToJson): never rename.
constexpr EnumName<KeyType> kKeyTypes[] = {
    {KeyType::kString, "string"},       {KeyType::kBytes, "bytes"},   {KeyType::kInt8, "int8"},
    {KeyType::kInt16, "int16"},         {KeyType::kInt32, "int32"},   {KeyType::kInt64, "int64"},
    {KeyType::kUInt64, "uint64"},       {KeyType::kFloat32, "float"}, {KeyType::kFloat64, "double"},
    {KeyType::kDecimal, "decimal"},     {KeyType::kBool, "bool"},     {KeyType::kDate, "date"},
    {KeyType::kTimestamp, "timestamp"}, {KeyType::kTime, "time"},
};

constexpr EnumName<ValueCodecKind> kValueCodecs[] = {{ValueCodecKind::kString, "string"},
                                                     {ValueCodecKind::kHBase, "hbase"},
                                                     {ValueCodecKind::kJson, "json"},
                                                     {ValueCodecKind::kRaw, "raw"}};

constexpr EnumName<HBaseType> kHBaseTypes[] = {
    {HBaseType::kShort, "short"},
    {HBaseType::kInt, "int"},
    {HBaseType::kLong, "long"},
    {HBaseType::kFloat, "float"},
    {HBaseType::kDouble, "double"},
    {HBaseType::kBoolean, "boolean"},
    {HBaseType::kBigDecimal, "bigdecimal"},
    {HBaseType::kString, "string"},
    {HBaseType::kBytes, "bytes"},
};

constexpr EnumName<NestLayout> kNestLayouts[] = {
    {NestLayout::kJson, "json"}, {NestLayout::kCells, "cells"}, {NestLayout::kValue, "value"}};

constexpr NameTable<KeyForm> kKeyFormNames{kKeyForms};
constexpr NameTable<KeyType> kKeyTypeNames{kKeyTypes};
constexpr NameTable<ValueCodecKind> kValueCodecNames{kValueCodecs};
constexpr NameTable<HBaseType> kHBaseTypeNames{kHBaseTypes};
constexpr NameTable<NestLayout> kNestLayoutNames{kNestLayouts};

}  // namespace

const NameTable<KeyForm>& KeyFormNames() { return kKeyFormNames; }
const NameTable<KeyType>& KeyTypeNames() { return kKeyTypeNames; }
const NameTable<ValueCodecKind>& ValueCodecNames() { return kValueCodecNames; }
const NameTable<HBaseType>& HBaseTypeNames() { return kHBaseTypeNames; }
const NameTable<NestLayout>& NestLayoutNames() { return kNestLayoutNames; }

std::string_view KeyTypeName(KeyType t) { return kKeyTypeNames.Name(t); }
bool ParseKeyType(std::string_view name, KeyType* t) { return kKeyTypeNames.Parse(name, t); }

std::string_view ValueCodecName(ValueCodecKind kind) { return kValueCodecNames.Name(kind); }
bool ParseValueCodec(std::string_view name, ValueCodecKind* kind) {
  return kValueCodecNames.Parse(name, kind);
}

std::string_view HBaseTypeName(HBaseType type) { return kHBaseTypeNames.Name(type, "auto"); }
bool ParseHBaseType(std::string_view name, HBaseType* type) {
  return kHBaseTypeNames.Parse(name, type);
}

std::string_view NestLayoutName(NestLayout layout) { return kNestLayoutNames.Name(layout); }

}  // namespace widen
