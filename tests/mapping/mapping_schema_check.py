#!/usr/bin/env python3
"""Validates mapping files against docs/mapping.schema.json.

Usage: mapping_schema_check.py SCHEMA [--yaml11] [--every-field FILE] [--cases FILE] MAPPING...

Each MAPPING must validate. With --every-field, FILE (a mapping that uses
every field of every kind of map) must validate too, and each copy of it
with an unknown field added to one of its maps must not: the schema refuses
what the loader refuses (tests/mapping/mapping_schema_test.cc checks the
loader on the same file). With --cases, each case of FILE
(tests/mapping/schema_cases.yaml) is built into a mapping that must be
valid or invalid as the case says, as the loader finds it (the same test).
With --yaml11 the MAPPINGs are read as PyYAML reads them by default (YAML
1.1: a bare `on` is true), as a user's own validation script may: widen
init's drafts quote "on" so that they pass that way too. Otherwise YAML is
read with YAML 1.2's booleans only
(true/false), as editors and widen read it, so that `on:` stays a key.
Exits 1 naming each file and problem.
"""
import copy
import json
import re
import sys

import jsonschema
import yaml


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2's booleans: `on`, `yes`, `no` stay text."""


Yaml12Loader.yaml_implicit_resolvers = {
    k: [(tag, r) for tag, r in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load(path, loader=Yaml12Loader):
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=loader)


def maps(node, path=()):
    """Every map of `node` (a list of paths to it), the top level first."""
    if isinstance(node, dict):
        yield path
        for k, v in node.items():
            yield from maps(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from maps(v, path + (i,))


def at(node, path):
    for p in path:
        node = node[p]
    return node


def case_mapping(case):
    """The mapping text of one case of schema_cases.yaml."""
    return (
        "source: x\ntables:\n"
        f"  - name: {case.get('table_name', 't')}\n"
        f"    from: {case.get('from', 'o')}\n"
        "    families: [d]\n"
        f"    key: {case.get('key', '{parts: [id]}')}\n"
        "    columns: [v]\n"
        "    access:\n"
        f"      - {case.get('access', '{name: a, by: [id]}')}\n"
    )


def main(argv):
    schema_path, rest = argv[1], argv[2:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    loader = Yaml12Loader
    if rest[:1] == ["--yaml11"]:
        loader, rest = yaml.SafeLoader, rest[1:]
    every = None
    if rest[:1] == ["--every-field"]:
        every, rest = rest[1], rest[2:]
    cases = None
    if rest[:1] == ["--cases"]:
        cases, rest = rest[1], rest[2:]
    failures = []
    if cases:
        with open(cases, encoding="utf-8") as f:
            listed = yaml.load(f, Loader=Yaml12Loader)
        for case in listed:
            doc = yaml.load(case_mapping(case), Loader=Yaml12Loader)
            if validator.is_valid(doc) != case["valid"]:
                failures.append(f"{cases}: case '{case['name']}': the schema finds it "
                                f"{'invalid' if case['valid'] else 'valid'}")
        print(f"{cases}: {len(listed)} cases")
    for path in ([every] if every else []) + rest:
        for e in validator.iter_errors(load(path, Yaml12Loader if path == every else loader)):
            failures.append(f"{path}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
    if every:
        doc = load(every)
        # `on` maps take any column names: an extra key there is a column.
        paths = [p for p in maps(doc) if not p or p[-1] != "on"]
        for p in paths:
            bad = copy.deepcopy(doc)
            at(bad, p)["bogus_field"] = 1
            if validator.is_valid(bad):
                failures.append(f"{every}: an unknown field at /{'/'.join(map(str, p))} passes")
        print(f"{every}: {len(paths)} maps, each refused with an unknown field")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{len(rest) + (1 if every else 0)} mapping(s) checked, {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
