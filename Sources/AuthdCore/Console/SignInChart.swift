import Foundation

/// The overview's chart, drawn on the server as SVG (no script, no chart library): for each
/// provider a bar of sign-ins and one of failures, the longest bar the largest count. Colours come
/// from the stylesheet's classes; the SVG's title and the table beside it say the same in words.
enum SignInChart {
    static let width = 640, barHeight = 14, rowGap = 10, labelWidth = 120

    /// `rows`: provider, sign-ins, failures, in the order drawn.
    static func svg(_ rows: [(provider: String, succeeded: Int, failed: Int)]) -> String {
        guard !rows.isEmpty else { return "" }
        let largest = max(1, rows.map { max($0.succeeded, $0.failed) }.max() ?? 1)
        let plot = width - labelWidth - 60
        let rowHeight = 2 * barHeight + rowGap
        let height = rows.count * rowHeight + rowGap
        var out = """
            <svg class="chart" role="img" aria-labelledby="chart-title" viewBox="0 0 \(width) \(height)" width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">
            <title id="chart-title">Sign-ins and failed sign-ins in the last 24 hours, by provider</title>

            """
        for (i, row) in rows.enumerated() {
            let y = rowGap + i * rowHeight
            let ok = row.succeeded * plot / largest, failed = row.failed * plot / largest
            out += "<text class=\"chart-label\" x=\"0\" y=\"\(y + barHeight + 4)\">\(escape(row.provider))</text>\n"
            out += "<rect class=\"chart-ok\" x=\"\(labelWidth)\" y=\"\(y)\" width=\"\(max(ok, row.succeeded > 0 ? 2 : 0))\" height=\"\(barHeight)\"></rect>\n"
            out += "<text class=\"chart-value\" x=\"\(labelWidth + ok + 6)\" y=\"\(y + barHeight - 2)\">\(row.succeeded)</text>\n"
            out += "<rect class=\"chart-failed\" x=\"\(labelWidth)\" y=\"\(y + barHeight)\" width=\"\(max(failed, row.failed > 0 ? 2 : 0))\" height=\"\(barHeight)\"></rect>\n"
            out += "<text class=\"chart-value\" x=\"\(labelWidth + failed + 6)\" y=\"\(y + 2 * barHeight - 2)\">\(row.failed)</text>\n"
        }
        return out + "</svg>"
    }

    /// XML's five special characters.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
