// Building blocks of the HTML reports (not a public API): escaping, the page shell with its
// inline style sheet and script, class colours, provenance badges.
#ifndef QPROF_REPORTS_HTML_HTML_UTIL_H_
#define QPROF_REPORTS_HTML_HTML_UTIL_H_

#include <string>
#include <utility>
#include <vector>

namespace qprof::reports::html {

// Escapes & < > " ' for use in text and in double- or single-quoted attributes. Bytes that
// are not valid UTF-8 become U+FFFD so the page stays well-formed.
std::string Escape(const std::string& s);

// A number for an attribute or SVG coordinate: fixed notation, at most `digits` decimals,
// no locale, "0" for non-finite values.
std::string Num(double v, int digits = 2);

// ` title="<raw name>" data-raw-name="<raw name>"` for a kernel name element: the name as
// the trace spells it, beside qprof's normalised one (tooltip, and for joins with nsys stats
// and Perfetto searches); "" when unknown.
std::string RawNameAttrs(const std::string& raw_name);

// Okabe-Ito colours per pipe class; grey for anything else.
const char* ClassFill(const std::string& cls);
// Text colour that reads on ClassFill(cls).
const char* ClassInk(const std::string& cls);
// The canonical class order: tensor, simt, comm, memory, other.
const std::vector<std::string>& ClassOrder();

// A small pill that says where a figure came from: kind picks the style
// ("measured", "imported", "sass", "registry", "work_rate", "name_rule", "modelled", "host", "unknown").
std::string Badge(const std::string& kind, const std::string& text,
                  const std::string& tooltip = "");
// Badge kind for a provenance sentence ("measured on GPU" -> "measured", ...).
std::string BadgeKindFor(const std::string& provenance);

// <span class="cls cls-simt">simt</span>
std::string ClassPill(const std::string& cls);
// A numeric table cell: <td class="num" data-sort="raw">text</td>.
std::string NumCell(const std::string& text, double raw, int digits = 6);
// A share cell with a small bar in the class colour: width proportional to the share.
std::string ShareCell(double share, const std::string& cls);

// A whole document: <!doctype html>, head with the inline style sheet, `body`, the inline
// script (left out with `with_script` false: the page reads without it, only sorting and
// filtering go). `footer_links` are (text, href) pairs, escaped here.
std::string Page(const std::string& title, const std::string& body,
                 const std::vector<std::pair<std::string, std::string>>& footer_links,
                 bool with_script = true);

}  // namespace qprof::reports::html

#endif  // QPROF_REPORTS_HTML_HTML_UTIL_H_
