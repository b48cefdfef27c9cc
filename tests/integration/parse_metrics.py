#!/usr/bin/env python3
"""Reads a Prometheus text-format file with the Prometheus client's own parser
(prometheus_client.parser.text_string_to_metric_families, Debian's
python3-prometheus-client) and prints its samples as JSON lines:
{"family": ..., "type": ..., "help": ..., "name": ..., "labels": {...}, "value": ...}.
Exits 1 with the parser's message when the file does not parse; also when a
family has no HELP or TYPE line, or a sample's name is not its family's."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    declared = {}
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            declared.setdefault(parts[2], set()).add(parts[1])
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and others
        print(f"parse error: {e!r}", file=sys.stderr)
        return 1
    for f in families:
        if declared.get(f.name) != {"HELP", "TYPE"}:
            print(f"family {f.name} lacks its HELP or TYPE line", file=sys.stderr)
            return 1
        for s in f.samples:
            if s.name != f.name:
                print(f"sample {s.name} in family {f.name}", file=sys.stderr)
                return 1
            print(json.dumps({"family": f.name, "type": f.type, "help": f.documentation,
                              "name": s.name, "labels": s.labels, "value": s.value}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
