#include "transform/diagram.h"

#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/bytes.h"

namespace widen {

namespace {

constexpr char kTitleColor[] = "#2f4f6f";
constexpr char kKeyColor[] = "#ffe8a3";
constexpr char kFamilyColor[] = "#d8e8f8";
constexpr char kNestColor[] = "#e4f4e0";
constexpr char kNest2Color[] = "#f4e4f0";

std::string E(const std::string& s) { return DotHtmlEscape(s); }

std::string PartText(const KeyPartPlan& p, KeyForm form) {
  if (p.is_literal) return "'" + ToStringBinary(p.literal) + "'";
  std::string s = p.name + " : " + std::string(KeyTypeName(p.type));
  if (form == KeyForm::kText) {
    if (p.width > 0) s += fmt::format(", {} digits", p.width);
  } else {
    int bytes = KeyTypeBytes(p.type);
    if ((p.type == KeyType::kString || p.type == KeyType::kBytes) && p.width > 0) bytes = p.width;
    s += bytes > 0 ? fmt::format(", {}B", bytes) : ", var";
  }
  if (p.reverse) s += ", reversed";
  if (p.desc) s += ", desc";
  if (p.null_marker) s += ", NULL first";
  return s;
}

std::string IdText(const NestPlan& n) {
  std::string s = n.prefix.empty() ? "" : "'" + ToStringBinary(n.prefix) + "'";
  const auto& parts = n.qualifier.parts();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!s.empty()) s += " + ";
    s += parts[i].is_literal ? "'" + ToStringBinary(parts[i].literal) + "'"
                             : "&lt;" + E(parts[i].name) + "&gt;";
    if (!parts[i].is_literal && parts[i].width > 0) s += fmt::format("({})", parts[i].width);
  }
  return s;
}

// A nested entity's box (and its own children's) inside a family cell.
std::string NestBox(const NestPlan& n, const std::string& outer_prefix, int level) {
  const std::string qual = outer_prefix.empty() ? IdText(n) : outer_prefix + " + " + IdText(n);
  std::string s = fmt::format(
      "<TABLE BORDER=\"1\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"3\" "
      "BGCOLOR=\"{}\">",
      level == 1 ? kNestColor : kNest2Color);
  s += fmt::format(
      "<TR><TD ALIGN=\"LEFT\"><B>{}</B> <I>(nested {}, one {} per child{})</I></TD></TR>", qual,
      E(n.spec->table), n.layout == NestLayout::kCells ? "cell per attribute" : "cell",
      n.version_index >= 0 ? ", versioned by " + E(n.spec->version.ToString()) : "");
  std::string attrs;
  for (const auto& [name, idx] : n.value_columns) {
    if (!attrs.empty()) attrs += ", ";
    attrs += E(name);
  }
  if (!attrs.empty()) {
    s += fmt::format("<TR><TD ALIGN=\"LEFT\">{}{}{}</TD></TR>",
                     n.layout == NestLayout::kCells ? "" : "{", attrs,
                     n.layout == NestLayout::kCells ? "" : "}");
  }
  for (const auto& g : n.children) {
    if (g.family == n.family) s += "<TR><TD>" + NestBox(g, qual, level + 1) + "</TD></TR>";
  }
  s += "</TABLE>";
  return s;
}

std::string FamilyOptions(const FamilyDescriptor& f) {
  std::string s = fmt::format("VERSIONS {}", f.versions);
  if (f.ttl_seconds > 0) s += fmt::format(", TTL {}s", f.ttl_seconds);
  if (f.compression != "NONE") s += ", " + f.compression;
  return s;
}

// A double-quoted DOT string.
std::string DotQuote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q.push_back('\\');
    q.push_back(c);
  }
  return q + "\"";
}

std::string NodeId(const std::string& prefix, const std::string& name) {
  std::string id = prefix;
  for (char c : name) {
    id.push_back((std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_');
  }
  return id;
}

}  // namespace

std::string DotHtmlEscape(const std::string& text) {
  std::string s;
  for (char c : text) {
    switch (c) {
      case '&':
        s += "&amp;";
        break;
      case '<':
        s += "&lt;";
        break;
      case '>':
        s += "&gt;";
        break;
      case '"':
        s += "&quot;";
        break;
      case '\'':
        s += "&#39;";
        break;
      default:
        s.push_back(c);
    }
  }
  return s;
}

std::string DesignDiagramDot(const std::vector<const TablePlan*>& tables) {
  std::string dot =
      "digraph widen {\n"
      "  graph [rankdir=LR, fontname=\"Helvetica\", nodesep=0.4, ranksep=1.2];\n"
      "  node [fontname=\"Helvetica\", fontsize=11];\n"
      "  edge [fontname=\"Helvetica\", fontsize=10, color=\"#555555\"];\n";
  // Node ids: NodeId's, with a counter after one another name already has
  // ("a-b" and "a_b" would both be source_a_b).
  std::set<std::string> taken;
  auto unique = [&taken](std::string id) {
    if (!taken.insert(id).second) {
      int n = 2;
      while (!taken.insert(fmt::format("{}_{}", id, n)).second) ++n;
      id = fmt::format("{}_{}", id, n);
    }
    return id;
  };
  std::map<std::string, std::string> sources;  // source table -> its node id
  std::string edges;
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    const TablePlan& tp = *tables[ti];
    const std::string node = fmt::format("target{}", ti);
    const auto& fams = tp.descriptor.families;
    const size_t span = fams.size() + 1;
    // The families' ports, unique within the table as node ids are.
    std::set<std::string> port_taken;
    std::map<std::string, std::string> ports;
    for (const auto& f : fams) {
      std::string id = NodeId("", f.name);
      if (!port_taken.insert(id).second) {
        int n = 2;
        while (!port_taken.insert(fmt::format("{}_{}", id, n)).second) ++n;
        id = fmt::format("{}_{}", id, n);
      }
      ports[f.name] = id;
    }
    auto port = [&ports](const std::string& family) {
      auto it = ports.find(family);
      return it != ports.end() ? it->second : NodeId("", family);
    };
    std::string l = "<TABLE BORDER=\"1\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"5\">";
    const std::string from = tp.scan.table.empty() ? "query " + tp.scan.alias : tp.scan.table;
    l += fmt::format(
        "<TR><TD COLSPAN=\"{}\" BGCOLOR=\"{}\"><FONT COLOR=\"white\"><B>{}</B>  (one row per "
        "{} row)</FONT></TD></TR>",
        span, kTitleColor, E(tp.descriptor.FullName()), E(from));
    // Headers: row key, then one per family.
    l += fmt::format("<TR><TD BGCOLOR=\"{}\"><B>row key</B> ({})</TD>", kKeyColor,
                     KeyFormNames().Name(tp.key.form()));
    for (const auto& f : fams) {
      l += fmt::format("<TD BGCOLOR=\"{}\" PORT=\"f_{}\"><B>family {}</B><BR/>{}</TD>",
                       kFamilyColor, port(f.name), E(f.name), E(FamilyOptions(f)));
    }
    l += "</TR><TR>";
    // The key's parts, one per line.
    std::string key;
    if (tp.key.salt().size > 0) {
      key += fmt::format("salt : hash mod {}<BR ALIGN=\"LEFT\"/>", tp.key.salt().size);
    }
    if (tp.key.hash_prefix().size > 0) {
      key += fmt::format("hash : {} bytes<BR ALIGN=\"LEFT\"/>", tp.key.hash_prefix().size);
    }
    for (size_t i = 0; i < tp.key.parts().size(); ++i) {
      if (i > 0 && tp.key.form() == KeyForm::kText) {
        key += E("'" + ToStringBinary(tp.key.separator()) + "'") + "<BR ALIGN=\"LEFT\"/>";
      }
      key += E(PartText(tp.key.parts()[i], tp.key.form())) + "<BR ALIGN=\"LEFT\"/>";
    }
    l += fmt::format("<TD VALIGN=\"TOP\" ALIGN=\"LEFT\" BALIGN=\"LEFT\">{}</TD>", key);
    // Each family: its plain columns, then its nested entities.
    for (const auto& f : fams) {
      std::string cell =
          "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"2\">";
      bool any = false;
      for (const auto& c : tp.cells) {
        if (c.family != f.name) continue;
        any = true;
        cell += fmt::format("<TR><TD ALIGN=\"LEFT\"><B>{}</B> = {}</TD></TR>",
                            E(ToStringBinary(c.qualifier)), E(c.column));
      }
      for (const auto& n : tp.nests) {
        if (n.family == f.name) {
          any = true;
          cell += "<TR><TD>" + NestBox(n, "", 1) + "</TD></TR>";
        }
        for (const auto& g : n.children) {
          if (g.family == f.name && n.family != f.name) {
            any = true;
            cell += "<TR><TD>" + NestBox(g, IdText(n), 2) + "</TD></TR>";
          }
        }
      }
      if (!any) cell += "<TR><TD><I>(no cells)</I></TD></TR>";
      cell += "</TABLE>";
      l += "<TD VALIGN=\"TOP\">" + cell + "</TD>";
    }
    l += "</TR></TABLE>";
    dot += fmt::format("  {} [shape=plain, label=<{}>];\n", node, l);

    // Where the source rows go.
    auto source = [&](const std::string& table) {
      auto [it, first] = sources.try_emplace(table);
      if (first) {
        it->second = unique(NodeId("source_", table));
        dot +=
            fmt::format("  {} [shape=cylinder, style=filled, fillcolor=\"#eeeeee\", label={}];\n",
                        it->second, DotQuote(table));
      }
      return it->second;
    };
    if (!tp.scan.table.empty()) {
      edges += fmt::format("  {} -> {} [label=\"one row per row\", penwidth=2];\n",
                           source(tp.scan.table), node);
    }
    for (const auto& j : tp.scan.joins) {
      edges += fmt::format("  {} -> {} [label=\"joined: copied in\", style=dotted];\n",
                           source(j.table), node);
    }
    std::vector<const NestPlan*> nests;
    for (const auto& n : tp.nests) nests.push_back(&n);
    for (size_t i = 0; i < nests.size(); ++i) {
      for (const auto& g : nests[i]->children) nests.push_back(&g);
      const NestPlan& n = *nests[i];
      edges +=
          fmt::format("  {} -> {}:f_{} [label={}, style=dashed];\n", source(n.spec->table), node,
                      port(n.family), DotQuote("nested as '" + ToStringBinary(n.prefix) + "'"));
      for (const auto& j : n.spec->joins) {
        edges +=
            fmt::format("  {} -> {}:f_{} [label={}, style=dotted];\n", source(j.table), node,
                        port(n.family), DotQuote("joined into '" + ToStringBinary(n.prefix) + "'"));
      }
    }
  }
  return dot + edges + "}\n";
}

}  // namespace widen
