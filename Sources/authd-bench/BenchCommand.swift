import FileStore
import AuthStorage
import ArgumentParser
import AuthKernel
import Crypto
import CryptoExtras
import Foundation
import Logging

/// `authd-bench`: measurements `bench/run` needs from inside the process, kept out of the production binary.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authd-bench",
        abstract: "Measure the machine's crypto rates and the store (used by bench/run).",
        subcommands: [CryptoBench.self, StoreBench.self, StoreOpenBench.self, StoreWritesBench.self, StoreFillBench.self, NotifyBench.self]
    )
}

/// Ed25519 sign and verify and Argon2id hash rates on one core: the limits the HTTP figures are compared with.
struct CryptoBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "crypto", abstract: "Ed25519, RSA-2048 and Argon2id rates on one core, as JSON.")

    @Option(help: "Seconds per measurement.") var seconds: Double = 1
    @Option(help: "Argon2id passes.") var opsLimit: Int = 2
    @Option(help: "Argon2id memory in KiB.") var memoryKib: Int = 19_456

    func run() throws {
        let key = Ed25519KeyPair()
        let message = Array(repeating: UInt8(7), count: 400)
        let signature = key.sign(message)
        let sign = rate(seconds) { _ = key.sign(message) }
        let verify = rate(seconds) { _ = Ed25519.verify(signature: signature, message: message, publicKey: key.publicKey) }
        // RS256 as the OpenID Provider signs ID tokens: RSASSA-PKCS1-v1_5, SHA-256, a 2048-bit key.
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rsaSign = rate(seconds) { _ = try? rsa.signature(for: Crypto.SHA256.hash(data: message), padding: .insecurePKCS1v1_5) }
        let argon = Argon2id(opsLimit: opsLimit, memLimit: memoryKib * 1024)
        let hash = try argon.hash("benchmark password")
        let argonRate = rate(seconds) { _ = Argon2id.verify("benchmark password", hash: hash) }
        let out: [String: Double] = [
            "ed25519_sign_per_s_per_core": sign, "ed25519_verify_per_s_per_core": verify, "argon2id_per_s_per_core": argonRate,
            "rsa2048_sign_per_s_per_core": rsaSign,
        ]
        FileHandle.standardOutput.write(try JSONEncoder().encode(out) + Data("\n".utf8))
    }

    func rate(_ seconds: Double, _ body: () -> Void) -> Double {
        var n = 0
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            body()
            n += 1
        }
        return (Double(n) / Date().timeIntervalSince(start)).rounded()
    }
}

/// Journal appends with concurrent writers, write latency and start-up time at a given number of users.
struct StoreBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store", abstract: "Store appends and start-up, as JSON lines.")

    @Option(help: "A folder on the disk to measure (a fresh subfolder is made and removed).") var folder: String
    @Option(help: "Seconds per writer count.") var seconds: Double = 3
    @Option(help: "Concurrent writer counts.") var writers: String = "1,16,64"
    @Option(help: "Store sizes for write latency and start-up.") var users: String = "1000,10000,100000,1000000"
    @Option(help: "Journal bytes after which the appending stores compact.") var compactAfterBytes: Int = 64 << 20

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let base = folder + "/store-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }

        for n in writers.split(separator: ",").compactMap({ Int($0) }) {
            let dir = base + "/writers-\(n)"
            let store = try await JournalStore.open(folder: dir, compactAfterBytes: compactAfterBytes, logger: logger)
            let cpu0 = Self.cpuSeconds()
            let result = try await appends(store, writers: n, seconds: seconds)
            let cpu = Self.cpuSeconds() - cpu0
            let batches = await store.syncedBatches
            await store.close()
            Self.emit(["what": .string("journal appends, \(n) writers"), "writers": .number(Double(n)), "rps": .number(result.rate),
                  "p50_ms": .number(result.p50), "p99_ms": .number(result.p99), "fsyncs_per_s": .number((Double(batches) / seconds).rounded()),
                  "cpu_cores": .number((cpu / seconds * 100).rounded() / 100)])
        }

        let counts = users.split(separator: ",").compactMap { Int($0) }
        for count in counts { try await populate(base + "/users-\(count)", users: count, logger: logger) }
        // Each size is opened by a new process, as a server starting up would: in this one, the
        // memory the populating just freed would make the smaller stores look cheaper than they are.
        // Three rounds over the sizes (the median counts), so the start-up ratio between two sizes
        // compares the same moments of a shared machine rather than opens a minute apart; and on
        // this VM one open in several reads the snapshot from disk after the page cache was
        // reclaimed. The opens write nothing, so each loads the same snapshot. A first round is a
        // warm-up and does not count: the first open of a
        // million users after populating was its size's slowest by 20-50 %, an effect of what came
        // before it (this VM hands freed pages back to its host, a likely cause, not confirmed).
        let folders = counts.map { base + "/users-\($0)" }
        var startups: [Int: [Double]] = [:]
        var warmUps: [Int: Double] = [:]
        var opened: [Int: [String: JSONValue]] = [:]
        for round in 0..<4 {
            for (count, dir) in zip(counts, folders) {
                let fields = try runInNewProcess(["store-open", "--folder", dir, "--seconds", "0"])
                guard case .number(let startup) = fields["startup_s"] else { throw ValidationError("bench store-open gave no startup_s") }
                if round == 0 { warmUps[count] = startup; continue }
                startups[count, default: []].append(startup)
                opened[count] = fields
            }
        }
        // Then write latency, every size open in one new process and taking turns (store-writes).
        let writes = try runInNewProcess(["store-writes", "--folders", folders.joined(separator: ","), "--rounds", "4",
                                          "--seconds", String(min(seconds, 2) / 4)])
        for (count, dir) in zip(counts, folders) {
            let fields = opened[count] ?? [:], runs = startups[count] ?? []
            guard case .number(let rssBytes) = fields["rss_bytes"] else { throw ValidationError("bench store-open gave no rss_bytes") }
            guard case .object(let write) = writes[dir] else { throw ValidationError("bench store-writes gave nothing for \(dir)") }
            Self.emit(["what": .string("store with \(count) users"), "users": .number(Double(count)), "startup_s": .number(runs.sorted()[1]),
                  "startup_runs_s": .array(runs.map { .number($0) }), "startup_warm_up_s": .number(warmUps[count] ?? 0),
                  "write_p50_ms": write["write_p50_ms"] ?? .null, "write_p99_ms": write["write_p99_ms"] ?? .null,
                  "write_rounds_p50_ms": write["write_rounds_p50_ms"] ?? .null,
                  "rss_bytes_per_user": .number((rssBytes / Double(count)).rounded())])
        }
    }

    /// Runs `authd-bench` with `arguments` in a new process and returns the JSON object it prints.
    func runInNewProcess(_ arguments: [String]) throws -> [String: JSONValue] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, case .object(let fields) = try JSONDecoder().decode(JSONValue.self, from: output) else {
            throw ValidationError("authd-bench \(arguments.joined(separator: " ")) failed")
        }
        return fields
    }

    func appends(_ store: JournalStore, writers: Int, seconds: Double) async throws -> (rate: Double, p50: Double, p99: Double, max: Double) {
        let run = try await appendLatencies(store, writers: writers, seconds: seconds)
        return Self.summary(latencies: run.latencies, wall: run.wall)
    }

    /// Rate and percentiles of write latencies (in ms, sorted) made over `wall` seconds.
    static func summary(latencies: [Double], wall: Double) -> (rate: Double, p50: Double, p99: Double, max: Double) {
        // In microseconds: write latencies are 0.2-0.3 ms, and the 1M/1k target (1.3 x) is judged on them.
        func pct(_ p: Double) -> Double { latencies.isEmpty ? 0 : (latencies[min(latencies.count - 1, Int(p * Double(latencies.count - 1)))] * 1000).rounded() / 1000 }
        return (wall > 0 ? (Double(latencies.count) / wall).rounded() : 0, pct(0.5), pct(0.99), pct(1))
    }

    /// Each write's latency in ms, sorted, from `writers` concurrent writers appending new users for
    /// `seconds`, and the seconds they took.
    func appendLatencies(_ store: JournalStore, writers: Int, seconds: Double) async throws -> (latencies: [Double], wall: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        let t0 = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var local: [Double] = []
                    var count: UInt64 = 0
                    while ContinuousClock.now < deadline {
                        count += 1
                        // Ids from a counter rather than getrandom(2): the scenario measures the store,
                        // and two random UUIDs per record were 5 % of the 64-writer run's samples.
                        let id = Self.sequentialID(writer: UInt64(writer), count: count)
                        let user = UserRecord(id: id, email: "w\(id.lowercased)@bench.test", createdAt: Date())
                        let start = ContinuousClock.now
                        try await store.write { $0.put(user) }
                        local.append(self.seconds(ContinuousClock.now - start) * 1000)
                    }
                    return local
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }.sorted()
        return (latencies, self.seconds(ContinuousClock.now - t0))
    }

    /// A distinct version-4-shaped UUID for each writer and count, without a system call.
    static func sequentialID(writer: UInt64, count: UInt64) -> UUID {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: writer.bigEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: count.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        raw.6 = (raw.6 & 0x0F) | 0x40
        raw.8 = (raw.8 & 0x3F) | 0x80
        return UUID(uuid: raw)
    }

    /// A folder holding `users` users (each with `sessionsPerUser` sessions) in its snapshot, as a
    /// long-running server would leave it.
    func populate(_ dir: String, users: Int, sessionsPerUser: Int = 0, logger: Logger) async throws {
        let store = try await JournalStore.open(folder: dir, compactAfterBytes: 1 << 40, logger: logger)
        let now = Date()
        var made = 0
        while made < users {
            let batch = min(10_000, users - made)
            let start = made
            try await store.write { state in
                for i in start..<(start + batch) {
                    let user = UserRecord(email: "u\(i)@bench.test", emailVerified: true, identities: [Identity(provider: "email", subject: "u\(i)@bench.test")], createdAt: now)
                    state.put(user)
                    for s in 0..<sessionsPerUser {
                        state.put(SessionRecord(
                            userID: user.id, deviceName: "Phone \(s)", platform: "ios", amr: ["otp"], createdAt: now, expiresAt: now + 30 * 86_400,
                            refreshHash: Base64URL.encode(Array(Crypto.SHA256.hash(data: Array("u\(i)-\(s)".utf8))))))
                    }
                }
            }
            made += batch
        }
        await store.close()  // writes the snapshot
    }

    /// CPU time (user and system) this process has used so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

    static func emit(_ fields: [String: JSONValue]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        FileHandle.standardOutput.write(((try? encoder.encode(fields)) ?? Data()) + Data("\n".utf8))
    }
}

/// Opens a data folder in this (new) process: start-up time, resident memory it added and write
/// latency, as JSON. `authd-bench store` runs it on each store size it made.
struct StoreOpenBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store-open", abstract: "Open a data folder's store; start-up time, memory and write latency as JSON.")

    @Option(help: "The data folder.") var folder: String
    @Option(help: "Seconds of single-writer appends after opening.") var seconds: Double = 2
    @Option(help: "Journal bytes after which the store compacts (a small value makes it compact while writing).") var compactAfterBytes: Int = 64 << 20
    @Option(help: "Concurrent writers after opening.") var writers: Int = 1
    @Option(help: "First fill the folder with this many users (as bench store does).") var populate: Int?

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let bench = try StoreBench.parse(["--folder", folder])
        if let populate { try await bench.populate(folder, users: populate, logger: logger) }
        let rss0 = StoreBench.residentBytes()
        let start = ContinuousClock.now
        let store = try await JournalStore.open(folder: folder, compactAfterBytes: compactAfterBytes, logger: logger)
        let startup = bench.seconds(ContinuousClock.now - start)
        let rss = StoreBench.residentBytes() - rss0
        let write = try await bench.appends(store, writers: writers, seconds: seconds)
        await store.close()
        StoreBench.emit(["startup_s": .number((startup * 1000).rounded() / 1000), "rss_bytes": .number(Double(rss)),
                         "write_p50_ms": .number(write.p50), "write_p99_ms": .number(write.p99), "write_max_ms": .number(write.max), "writes_per_s": .number(write.rate)])
    }
}

/// Fills a data folder's store with users and sessions (for the export, import and restore figures).
struct StoreFillBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store-fill", abstract: "Fill a folder with users and their sessions.")

    @Option(help: "The data folder (created).") var folder: String
    @Option(help: "Users.") var users: Int
    @Option(help: "Sessions per user.") var sessionsPerUser: Int = 1

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        try await StoreBench.parse(["--folder", folder]).populate(folder, users: users, sessionsPerUser: sessionsPerUser, logger: logger)
    }
}
