#if canImport(Glibc)
import AuthdCore
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Draws an admin command's progress on one line of a terminal's standard error: the count, the
/// share done, the rate and the time left, redrawn at most ten times a second and erased when the
/// command ends. Nothing is drawn when standard error is not a terminal (a script's log stays clean).
final class ProgressLine: Sendable {
    private struct State {
        var phase = ""
        var phaseStart = 0.0
        var lastDraw = -1.0
        var drawn = false
    }

    private let state = Mutex(State())
    private let clock: @Sendable () -> Double
    private let output: @Sendable (String) -> Void

    /// A line on standard error, or nil when standard error is not a terminal.
    static func onTerminal() -> ProgressLine? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        return ProgressLine(clock: { Date().timeIntervalSinceReferenceDate }, output: { FileHandle.standardError.write(Data($0.utf8)) })
    }

    init(clock: @escaping @Sendable () -> Double, output: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.output = output
    }

    /// Takes one report; draws it unless the line was drawn less than a tenth of a second ago.
    func report(_ progress: AdminProgress) {
        let now = clock()
        let text: String? = state.withLock { s in
            let newPhase = progress.phase != s.phase
            if newPhase {
                s.phase = progress.phase
                s.phaseStart = now
            }
            let finished = progress.fraction.map { $0 >= 1 } ?? false
            guard newPhase || finished || now - s.lastDraw >= 0.1 else { return nil }
            s.lastDraw = now
            s.drawn = true
            return Self.text(progress, elapsed: now - s.phaseStart)
        }
        if let text { output("\r\u{1B}[K" + text) }
    }

    /// ``report(_:)`` as a sink for ``AdminOperations/run(_:progress:)``.
    var sink: AdminProgressSink { { self.report($0) } }

    /// Erases the line, so the command's own output starts on a clean one.
    func finish() {
        let drawn = state.withLock { s in
            defer { s.drawn = false }
            return s.drawn
        }
        if drawn { output("\r\u{1B}[K") }
    }

    /// The line for a report: "importing users: 412,000 users (41%), 35,100/s, 0:17 left".
    static func text(_ p: AdminProgress, elapsed: Double) -> String {
        // A phase that cannot count (reading a file in one piece) shows that it is alive and for how long.
        guard p.done > 0 || p.total != nil || p.fraction != nil else { return "\(p.phase)… \(duration(elapsed))" }
        var line = "\(p.phase): \(grouped(p.done))"
        if let total = p.total { line += " of \(grouped(total))" }
        line += " \(p.unit)"
        if let fraction = p.fraction { line += " (\(Int((fraction * 100).rounded(.down)))%)" }
        guard elapsed >= 0.5 else { return line }
        if p.done > 0 { line += ", \(grouped(Int((Double(p.done) / elapsed).rounded())))/s" }
        if let fraction = p.fraction, fraction > 0, fraction < 1 {
            line += ", \(duration(elapsed * (1 - fraction) / fraction)) left"
        } else {
            line += ", \(duration(elapsed))"
        }
        return line
    }

    /// 1234567 → "1,234,567".
    static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// Seconds as "0:07", "12:30" or "1:02:03".
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        let (h, m, r) = (s / 3600, s / 60 % 60, s % 60)
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(r))" : "\(m):\(two(r))"
    }
}
