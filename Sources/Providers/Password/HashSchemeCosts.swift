import AuthKernel
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// What verifying each password hash scheme held here costs on this machine (contract §17): a
/// refused sign-in is held at least as long as the costliest, so an unknown email (which hashes
/// nothing), a wrong native password and a wrong imported one answer at the same time.
///
/// Measured once per scheme, when the server starts and when an import lists a new one (checked
/// every minute): authd's own Argon2id, and each imported scheme as `authd import-users` records it
/// (a stand-in hash of the same parameters, never a user's). A scheme stays listed once imported.
final class HashSchemeCosts: Sendable {
    private let costs = Mutex<[String: Double]>([:])
    /// The latest measuring pass: passes run one after another, so one asked while another runs
    /// waits for it and then finds its schemes measured.
    private let latest = Mutex<Task<Int, any Error>?>(nil)

    /// Runs `pass` after any pass under way.
    func serially(_ pass: @escaping @Sendable () async throws -> Int) async throws -> Int {
        let task = latest.withLock { latest -> Task<Int, any Error> in
            let previous = latest
            let next = Task { _ = try? await previous?.value; return try await pass() }
            latest = next
            return next
        }
        return try await task.value
    }

    /// Where the import lists the imported schemes, as stand-in hashes (`PasswordProvider.standIn(for:)`).
    static let purpose = PasswordProvider.importedSchemes.purpose, key = PasswordProvider.importedSchemes.key
    /// The name of authd's own scheme among them.
    static let native = "argon2id (authd)"
    /// Verifications per scheme measured: the least is kept, so a busy moment at start-up does not
    /// make every refusal wait longer than a verification takes.
    static let runs = 3
    /// What the least run is multiplied by.
    static let margin = 1.5

    /// Seconds the costliest scheme measured takes to verify; 0 before any was measured.
    var costliest: Double { costs.withLock { $0.values.max() ?? 0 } }

    /// Records what verifying `scheme` took.
    func record(_ scheme: String, seconds: Double) { costs.withLock { $0[scheme] = seconds } }

    /// Whether `scheme` was measured.
    func isMeasured(_ scheme: String) -> Bool { costs.withLock { $0[scheme] != nil } }
}

extension PasswordProvider {
    /// The code record under which `authd import-users` lists the schemes it imported (payload
    /// `{"hashes": [stand-in, …]}`), for the provider to measure.
    public static let importedSchemes = (purpose: "password.imported_schemes", key: "held")

    /// A hash of the same scheme and parameters as `hash` that matches no password: verifying it
    /// costs what verifying `hash` does. nil for a hash that cannot be imported.
    public static func standIn(for hash: String) -> String? {
        guard case .success(let format) = ImportedPasswordHash.format(of: hash) else { return nil }
        let bcryptTail = String(repeating: ".", count: 53)
        func bcrypt(_ cost: Int) -> String { "$2b$" + (cost < 10 ? "0" : "") + "\(cost)$" + bcryptTail }
        switch format {
        case .bcrypt(let cost): return bcrypt(cost)
        case .djangoBcryptSHA256(let cost): return "bcrypt_sha256$" + bcrypt(cost)
        case .djangoPBKDF2(let iterations): return "pbkdf2_sha256$\(iterations)$standin$" + Data(count: 32).base64EncodedString()
        case .argon2(let memory, let iterations, let parallelism):
            return "$argon2id$v=19$m=\(memory),t=\(iterations),p=\(parallelism)$" + String(repeating: "A", count: 22) + "$" + String(repeating: "A", count: 43)
        }
    }

    /// The schemes the imports listed, as stand-in hashes.
    func importedSchemes() async throws -> [String] {
        guard case .array(let items)? = try await kernel.codes.pendingPayload(purpose: HashSchemeCosts.purpose, key: HashSchemeCosts.key)?["hashes"]
        else { return [] }
        return items.compactMap { if case .string(let s) = $0, Self.standIn(for: s) == s { s } else { nil } }
    }

    /// Measures authd's own scheme and each listed one not measured yet, one verification each on
    /// the hashing threads (never for a request). Returns how many it measured.
    @discardableResult
    func measureSchemeCosts() async throws -> Int {
        try await schemeCosts.serially { try await measurePass() }
    }

    private func measurePass() async throws -> Int {
        var measured = 0
        for scheme in [HashSchemeCosts.native] + (try await importedSchemes()) where !schemeCosts.isMeasured(scheme) {
            var least = Double.infinity
            for _ in 0..<HashSchemeCosts.runs {
                let clock = ContinuousClock(), start = clock.now
                if scheme == HashSchemeCosts.native {
                    _ = try await hasher.verify("stand-in", hash: nil)
                } else {
                    _ = try await hasher.verifyImported("stand-in", hash: scheme)
                }
                let elapsed = clock.now - start
                least = min(least, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
            // The least of the runs is the scheme's cost here; half again covers the jitter and the
            // queue a real verification meets, so a refusal that hashed nothing is not the quickest.
            schemeCosts.record(scheme, seconds: least * HashSchemeCosts.margin)
            measured += 1
        }
        if measured > 0 {
            kernel.logger.info("password hash schemes measured", metadata: ["refusal.floor_ms": "\(Int(refusalFloor * 1000))"])
        }
        return measured
    }

    /// Seconds a refused sign-in is held after it arrived: `password.refusal_floor_ms`, or the
    /// costliest scheme held here, whichever is larger.
    var refusalFloor: Double { max(Double(settings.refusalFloorMilliseconds) / 1000, schemeCosts.costliest) }
}

/// Measures the schemes at start and every minute after (an import while the server runs).
struct HashSchemeCostService: Service {
    let provider: PasswordProvider
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await provider.measureSchemeCosts() } catch {}
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }
}
