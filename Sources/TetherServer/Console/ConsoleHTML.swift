import Foundation

/// The web console's markup: a page layout, escaping, and the stylesheet shipped in the
/// binary. Server-rendered HTML only — no script, no external asset — readable in any
/// browser, with labels on every field, visible focus, and colours that keep a contrast of at
/// least 4.5:1 (docs/server.md, "Web console").
enum ConsoleHTML {
    /// Text for an element or an attribute value: everything that could end either escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // Control characters never reach a page (device text with them is refused on
                // the wire; this is the last guard).
                if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" || scalar.value == 0x7f { out += "\u{FFFD}" } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// A path segment (a partition name, a device id) for a link.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    /// A whole page: `title`, the navigation (`current` marked), and `body`; `refresh` (seconds)
    /// makes the browser load it again that often (`<meta http-equiv="refresh">`: no script).
    static func page(title: String, current: String?, signedIn: Bool, refresh: Int? = nil, body: HTML) -> HTML {
        let links = [
            ("partitions", "/console/partitions", "Partitions"), ("devices", "/console/devices", "Devices"),
            ("enrollment", "/console/enrollment", "Enrollment"),
        ]
        let items = links.map { key, href, label -> HTML in
            "<li><a href=\"\(href)\"\(key == current ? HTML(" aria-current=\"page\"") : "")>\(label)</a></li>"
        }
        let nav: HTML = signedIn ? "<nav aria-label=\"Console\"><ul>\(items)</ul></nav>" : ""
        let meta: HTML = refresh.map { "\n<meta http-equiv=\"refresh\" content=\"\($0)\">" } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">\(meta)
            <title>\(title) · Tether</title>
            <link rel="stylesheet" href="/console/style.css">
            </head>
            <body>
            <header><p class="brand"><a href="/console/partitions">Tether</a> console</p>\(nav)</header>
            <main id="main">
            <h1>\(title)</h1>
            \(body)
            </main>
            </body>
            </html>
            """
    }

    /// A table with a caption; `headers` are markup (a sort link) or text.
    static func table(caption: String, headers: [HTML], rows: [[HTML]], rowClasses: [String?] = []) -> HTML {
        let head = headers.map { h -> HTML in "<th scope=\"col\">\(h)</th>" }
        let body = rows.enumerated().map { index, cells -> HTML in
            let cls: HTML = index < rowClasses.count ? rowClasses[index].map { " class=\"\($0)\"" } ?? "" : ""
            let tds = cells.enumerated().map { $0.offset == 0 ? HTML("<th scope=\"row\">\($0.element)</th>") : "<td>\($0.element)</td>" }
            return "<tr\(cls)>\(tds)</tr>"
        }.joined(separator: "\n")
        return "<table><caption>\(caption)</caption><thead><tr>\(head)</tr></thead><tbody>\n\(body)\n</tbody></table>"
    }

    /// A table of text headers.
    static func table(caption: String, headers: [String], rows: [[HTML]], rowClasses: [String?] = []) -> HTML {
        table(caption: caption, headers: headers.map { h -> HTML in "\(h)" }, rows: rows, rowClasses: rowClasses)
    }

    /// A POST form to `action` carrying the CSRF token, `fields` and a button.
    static func form(action: String, csrf: String, fields: HTML = "", button: String, danger: Bool = false) -> HTML {
        """
        <form method="post" action="\(action)">
        <input type="hidden" name="csrf" value="\(csrf)">
        \(fields)
        <button type="submit"\(danger ? HTML(" class=\"danger\"") : "")>\(button)</button>
        </form>
        """
    }

    /// A hidden field.
    static func hidden(_ name: String, _ value: String) -> HTML { "<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">" }

    /// A labelled input; `id` (default `field-NAME`) must be unique on its page.
    static func input(_ name: String, label: String, value: String = "", type: String = "text", required: Bool = true, id: String? = nil) -> HTML {
        let id = id ?? "field-\(name)"
        return "<p><label for=\"\(id)\">\(label)</label> <input id=\"\(id)\" name=\"\(name)\" type=\"\(type)\" value=\"\(value)\"\(required ? HTML(" required") : "")></p>"
    }

    /// A labelled choice; `id` (default `field-NAME`) must be unique on its page.
    static func select(_ name: String, label: String, options: [(value: String, label: String)], selected: String? = nil, id: String? = nil) -> HTML {
        let id = id ?? "field-\(name)"
        let items = options.map { o -> HTML in "<option value=\"\(o.value)\"\(o.value == selected ? HTML(" selected") : "")>\(o.label)</option>" }
        return "<p><label for=\"\(id)\">\(label)</label> <select id=\"\(id)\" name=\"\(name)\">\(items)</select></p>"
    }

    /// The stylesheet: system fonts, dark text on light grounds (contrast ≥ 4.5:1), a visible
    /// focus ring, stale rows marked by more than colour (a border and a word).
    static let stylesheet = """
        :root { color-scheme: light; --ink: #1b1f24; --muted: #4a535e; --line: #c8ced6; --accent: #0b5cad; --warn-bg: #fff4d6; --warn-ink: #5c4200; --bad-bg: #fde8e8; --bad-ink: #8a1414; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #fff; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: 1.5rem; padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); background: #f3f5f8; }
        header .brand { margin: 0; font-weight: 700; }
        nav ul { display: flex; gap: 1rem; margin: 0; padding: 0; list-style: none; }
        a { color: var(--accent); }
        a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
        main { padding: 1rem 1.5rem 3rem; max-width: 80rem; }
        h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
        table { border-collapse: collapse; width: 100%; margin: 1rem 0; font-variant-numeric: tabular-nums; }
        caption { text-align: left; font-weight: 600; padding: .25rem 0; }
        th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        thead th { background: #eef1f5; }
        tr.stale { background: var(--warn-bg); color: var(--warn-ink); border-left: 4px solid #b38600; }
        tr.wedged, tr.pending { background: var(--bad-bg); color: var(--bad-ink); border-left: 4px solid #b42318; }
        .flag { font-weight: 700; }
        form { margin: .75rem 0; } form.inline { display: inline-flex; gap: .5rem; align-items: end; flex-wrap: wrap; }
        label { font-weight: 600; }
        input, select, button { font: inherit; padding: .35rem .55rem; border: 1px solid #6b7480; border-radius: 4px; }
        button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
        button.danger { background: #b42318; border-color: #b42318; }
        :focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
        .notice { padding: .75rem 1rem; border-left: 4px solid var(--accent); background: #eaf2fb; }
        .error { padding: .75rem 1rem; border-left: 4px solid #b42318; background: var(--bad-bg); color: var(--bad-ink); }
        ul.chips { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0; padding: 0; list-style: none; }
        ul.chips a { display: inline-block; padding: .15rem .6rem; border: 1px solid var(--line); border-radius: 1rem; text-decoration: none; }
        ul.chips a[aria-current="true"], th a[aria-current="true"] { font-weight: 700; }
        .pages p, .refresh { margin: .5rem 0; }
        figure { margin: .5rem 0 1rem; } figcaption { font-weight: 600; } svg.chart { max-width: 100%; height: auto; }
        details { margin: .5rem 0 1.5rem; } summary { cursor: pointer; color: var(--accent); }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; } dt { font-weight: 600; } dd { margin: 0; }
        """
}
