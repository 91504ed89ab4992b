import Foundation
import AuthKernel

/// The overview's chart, drawn on the server as SVG (no script, no chart library): for each
/// provider its name, then a bar of sign-ins and one of failures, the longest bar the largest count.
/// A legend on top names the two bars; colour is not the only signal: failures are hatched and
/// every count is written out with its word ("12 signed in", "3 failed"). Colours come from the
/// stylesheet's classes; the SVG's title and the table beside it say the same in words.
///
/// Drawn 400 units wide with 18-unit text, names above their bars: at most 25rem wide on a
/// screen (the text about 18 px) and about 13 px on a 320 px phone.
enum SignInChart {
    static let width = 400, barHeight = 18, rowGap = 14, labelHeight = 22, legendHeight = 34
    /// The longest bar: room right of it for its count and word.
    static let plot = width - 130

    /// `rows`: provider, sign-ins, failures, in the order drawn; the words in the task's language.
    static func svg(_ rows: [(provider: String, succeeded: Int, failed: Int)], messages: Messages = ConsoleRoutes.shippedMessages) -> String {
        guard !rows.isEmpty else { return "" }
        let largest = max(1, rows.map { max($0.succeeded, $0.failed) }.max() ?? 1)
        let rowHeight = labelHeight + 2 * barHeight + 4 + rowGap
        let height = legendHeight + rows.count * rowHeight
        func words(_ key: String) -> String { XMLText.escaped(messages.text(key)) }
        var out = """
            <svg class="chart" role="img" aria-labelledby="chart-title" viewBox="0 0 \(width) \(height)" width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">
            <title id="chart-title">\(words("console.chart.title"))</title>
            <defs><pattern id="chart-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect class="chart-failed" width="6" height="6"></rect><rect class="chart-hatch" width="2" height="6"></rect></pattern></defs>
            <g class="chart-legend">
            <rect class="chart-ok" x="0" y="6" width="18" height="18"></rect><text class="chart-label" x="26" y="21">\(words("console.chart.signins"))</text>
            <rect class="chart-failed-bar" x="140" y="6" width="18" height="18" fill="url(#chart-hatch)"></rect><text class="chart-label" x="166" y="21">\(words("console.chart.failed_signins"))</text>
            </g>

            """
        for (i, row) in rows.enumerated() {
            let y = legendHeight + i * rowHeight
            let barY = y + labelHeight + 2
            let ok = row.succeeded * plot / largest, failed = row.failed * plot / largest
            out += "<text class=\"chart-label chart-provider\" x=\"0\" y=\"\(y + labelHeight - 5)\">\(XMLText.escaped(row.provider))</text>\n"
            out += "<rect class=\"chart-ok\" x=\"0\" y=\"\(barY)\" width=\"\(max(ok, row.succeeded > 0 ? 2 : 0))\" height=\"\(barHeight)\"></rect>\n"
            out += "<text class=\"chart-value\" x=\"\(ok + 6)\" y=\"\(barY + barHeight - 4)\">\(XMLText.escaped(messages.plural("console.chart.signed_in", count: row.succeeded)))</text>\n"
            out += "<rect class=\"chart-failed-bar\" x=\"0\" y=\"\(barY + barHeight + 4)\" width=\"\(max(failed, row.failed > 0 ? 2 : 0))\" height=\"\(barHeight)\" fill=\"url(#chart-hatch)\"></rect>\n"
            out += "<text class=\"chart-value\" x=\"\(failed + 6)\" y=\"\(barY + 2 * barHeight)\">\(XMLText.escaped(messages.plural("console.chart.failed", count: row.failed)))</text>\n"
        }
        return out + "</svg>"
    }
}
