import FileStore
import AuthStorage
import ArgumentParser
import AuthKernel
import Foundation
import Logging

/// `authd-bench store-writes`: single-writer write latency of several data folders' stores, all open
/// in this one process and taking turns.
///
/// The target compares the latency at a million users with that at a thousand. Both are
/// `fdatasync`-bound and move with the disk's moment: measured one size after another, the disk
/// alone could miss the bound. In turns (the order reversed every other round) each size's writes
/// fall in the same moments, as (a), (b) and (c) do in `bench/run`.
struct StoreWritesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store-writes",
                                                    abstract: "Write latency of several stores in turns, as one JSON object keyed by folder.")

    @Option(help: "Data folders, comma-separated.") var folders: String
    @Option(help: "Rounds over the folders.") var rounds: Int = 4
    @Option(help: "Seconds of appends per folder and round.") var seconds: Double = 0.5

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let bench = try StoreBench.parse(["--folder", "."])
        let dirs = folders.split(separator: ",").map(String.init)
        var stores: [JournalStore] = []
        for dir in dirs { stores.append(try await JournalStore.open(folder: dir, logger: logger)) }
        var latencies = Array(repeating: [Double](), count: dirs.count)
        var walls = Array(repeating: 0.0, count: dirs.count)
        var roundP50s = Array(repeating: [JSONValue](), count: dirs.count)
        for round in 0..<rounds {
            let order = round % 2 == 0 ? Array(dirs.indices) : dirs.indices.reversed()
            for i in order {
                let run = try await bench.appendLatencies(stores[i], writers: 1, seconds: seconds)
                latencies[i] += run.latencies
                walls[i] += run.wall
                roundP50s[i].append(.number(StoreBench.summary(latencies: run.latencies, wall: run.wall).p50))
            }
        }
        for store in stores { await store.close() }
        var out: [String: JSONValue] = [:]
        for (i, dir) in dirs.enumerated() {
            let all = StoreBench.summary(latencies: latencies[i].sorted(), wall: walls[i])
            out[dir] = .object(["write_p50_ms": .number(all.p50), "write_p99_ms": .number(all.p99), "write_max_ms": .number(all.max),
                                "writes_per_s": .number(all.rate), "write_rounds_p50_ms": .array(roundP50s[i])])
        }
        StoreBench.emit(out)
    }
}
