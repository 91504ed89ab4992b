import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation
package import Logging
import Metrics
import NIOPosix
import Synchronization

/// `DATA/audit.jsonl`: security events, one JSON line each, fsync'ed before ``record(_:provider:user:account:device:reason:)``
/// returns (concurrent events share an fsync), rotated by size into `audit-1.jsonl` (newest) …
/// `audit-N.jsonl`. The client's address and the request id come from `RequestInfo/current`.
///
/// Recording is awaited next to the change it describes, so both are on disk before the client
/// hears of it. If the audit file cannot be written, the failure is logged and the request goes
/// on: an auth server that stops signing people in because its audit disk is full would be worse.
public actor AuditLog {
    private let folder: String?
    private let settings: AuthConfig.AuditSettings
    private let clock: any AuthClock
    private let logger: Logger
    private let io: NIOThreadPool?
    private var fd: Int32 = -1
    private var size = 0
    private var buffer: [UInt8] = []
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var flushing = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    /// An audit log in `folder`, or one that records nothing when `folder` is nil (tests, tools).
    package init(folder: String?, settings: AuthConfig.AuditSettings = .init(), clock: any AuthClock = SystemClock(), logger: Logger) {
        self.folder = folder
        self.settings = settings
        self.clock = clock
        self.logger = logger
        for event in AuditEventDeclaration.kernel { _ = Self.counter(event.name) }
        if folder != nil {
            let pool = NIOThreadPool(numberOfThreads: 1)
            pool.start()
            io = pool
        } else {
            io = nil
        }
    }

    /// The file's path.
    package nonisolated var path: String? { folder.map { $0 + "/audit.jsonl" } }

    /// Event names recorded without a declaration, each warned about once.
    private let undeclaredWarned = Mutex<Set<String>>([])
    /// The declared events: the kernel's and those of the providers started.
    private let declared = Mutex<[String: AuditEventDeclaration]>(Dictionary(AuditEventDeclaration.kernel.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }))

    /// Adds a provider's events to those known, and starts their `authd_audit_events_total` at 0.
    package nonisolated func declare(_ events: [AuditEventDeclaration]) {
        declared.withLock { known in for event in events where known[event.name] == nil { known[event.name] = event } }
        for event in events { _ = Self.counter(event.name) }
    }

    /// The declared events, by name.
    package nonisolated var declaredEvents: [AuditEventDeclaration] { declared.withLock { $0.values.sorted { $0.name < $1.name } } }

    private static func counter(_ event: String) -> Counter {
        Counter(label: "authd_audit_events_total", dimensions: [("event", LogSafe.text(event, maxLength: 64))])
    }

    /// Appends an event and returns once it is on disk.
    ///
    /// `event` is one the kernel or the recording provider declares (``AuthProvider/auditEvents``);
    /// another is written all the same, and the log warns once that nothing declares it.
    public func record(
        _ event: String, provider: String? = nil, user: UUID? = nil, account: String? = nil, device: String? = nil, reason: String? = nil
    ) async {
        if declared.withLock({ $0[event] == nil }), undeclaredWarned.withLock({ $0.insert(event).inserted }) {
            logger.warning("an audit event no provider declares was recorded", metadata: ["event": "\(LogSafe.text(event, maxLength: 64))"])
        }
        Self.counter(event).increment()
        if event == "sign_in" || event == "sign_in_failed" {
            // The reason of a failure is the contract's error code: a small, fixed set.
            let reason = event == "sign_in" ? "-" : (reason.map { LogSafe.text($0, maxLength: 32) } ?? "-")
            Counter(
                label: "authd_sign_ins_total",
                dimensions: [("provider", provider.map { LogSafe.text($0, maxLength: 32) } ?? "-"), ("outcome", event == "sign_in" ? "success" : "failure"), ("reason", reason)]
            ).increment()
        }
        guard folder != nil else { return }
        let request = RequestInfo.current
        // Escaped and bounded whoever chose them (JSON alone leaves DEL, C1, U+2028 and bidi
        // controls raw, which `authd audit tail` would print to a terminal).
        let entry = AuditEvent(
            time: Timestamp.string(clock.now()), event: LogSafe.text(event, maxLength: 64), provider: provider.map { LogSafe.text($0, maxLength: 64) },
            userID: user?.lowercased, account: account.map { LogSafe.text($0, maxLength: 254) },
            ip: request.map { LogSafe.text($0.clientIP, maxLength: 64) }, device: device.map { LogSafe.text($0, maxLength: 100) },
            reason: reason.map { LogSafe.text($0, maxLength: 100) }, requestID: request?.id
        )
        guard var line = try? encoder.encode(entry) else { return }
        line.append(0x0A)
        buffer.append(contentsOf: line)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            waiters.append(c)
            if !flushing {
                flushing = true
                Task { await self.flushLoop() }
            }
        }
    }

    private func flushLoop() async {
        while !buffer.isEmpty, let io, let folder {
            let bytes = buffer, batch = waiters
            buffer = []
            waiters = []
            let (fd, size, settings) = (self.fd, self.size, self.settings)
            do {
                (self.fd, self.size) = try await io.runIfActive { try Self.append(bytes, fd: fd, size: size, folder: folder, settings: settings) }
            } catch {
                logger.error("audit: could not write DATA/audit.jsonl; the event is lost", metadata: ["error": "\(error)"])
                if self.fd >= 0 { Glibc.close(self.fd) }
                self.fd = -1
            }
            for w in batch { w.resume() }
        }
        flushing = false
        for w in idleWaiters { w.resume() }
        idleWaiters = []
    }

    /// Writes and fsyncs `bytes`, first rotating when the file is full. Returns the open file and its size.
    private static func append(_ bytes: [UInt8], fd: Int32, size: Int, folder: String, settings: AuthConfig.AuditSettings) throws -> (Int32, Int) {
        let path = folder + "/audit.jsonl"
        var fd = fd, size = size
        if fd < 0 {
            fd = try DurableFile.openForAppend(path)
            size = Int(max(lseek(fd, 0, SEEK_END), 0))
        }
        if size > 0, size + bytes.count > settings.maxBytes {
            Glibc.close(fd)
            if settings.keep > 0 {
                unlink(folder + "/audit-\(settings.keep).jsonl")
                for n in stride(from: settings.keep - 1, through: 1, by: -1) {
                    rename(folder + "/audit-\(n).jsonl", folder + "/audit-\(n + 1).jsonl")
                }
                try DurableFile.check(rename(path, folder + "/audit-1.jsonl"), "rename", path)
            } else {
                unlink(path)
            }
            fd = try DurableFile.openForAppend(path)
            try DurableFile.syncDirectory(folder)
            size = 0
        }
        try DurableFile.writeAll(fd, bytes, path: path)
        try DurableFile.sync(fd, path: path)
        return (fd, size + bytes.count)
    }

    /// Waits for pending events and closes the file.
    package func close() async {
        if flushing { await withCheckedContinuation { idleWaiters.append($0) } }
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        try? await io?.shutdownGracefully()
    }
}
