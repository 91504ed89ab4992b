/// How far a long admin command (`import-users`, `import`, `export`, `backup`) has come: sent by the
/// server over the admin socket as it works, drawn by the CLI on a terminal (``ProgressLine``).
package struct AdminProgress: Codable, Sendable, Equatable {
    /// What is being done, as a short phrase: "importing users", "writing the backup".
    package var phase: String
    /// How many items are done in this phase.
    package var done: Int
    /// What the items are ("users", "records"), for the line.
    package var unit: String
    /// How many items the phase has, when known.
    package var total: Int?
    /// The part of the phase done (0…1), when known: the time left comes from it. It is not always
    /// `done / total`: an import of users knows how much of its file it has read, not how many lines remain.
    package var fraction: Double?

    /// Creates a report.
    package init(phase: String, done: Int, unit: String, total: Int? = nil, fraction: Double? = nil) {
        self.phase = phase
        self.done = done
        self.unit = unit
        self.total = total
        self.fraction = fraction ?? total.map { $0 > 0 ? min(1, Double(done) / Double($0)) : 1 }
    }
}

/// Where a command reports its progress; it must return at once (it is called from the work itself).
package typealias AdminProgressSink = @Sendable (AdminProgress) -> Void
