package import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
package import Logging
import Metrics
import NIOPosix
import Synchronization

/// The durable JSON-file store: state in memory, every change appended to a journal and fsync'ed
/// before the write returns, a compacted snapshot beside it.
///
/// - Writes run their body under the state's lock, so a body's reads and writes are atomic with
///   respect to every other write: a refresh rotation or a code check cannot interleave with another.
///   Keep bodies to lookups and changes: readers wait for the lock too.
/// - Concurrent writers share fsyncs (group commit): while one batch is being synced, new lines
///   gather in a buffer and go out together in the next one.
/// - The journal is a series of segment files `journal-NNNNNNNNNN.jsonl`. When the current one passes
///   ``AuthConfig/StorageSettings/compactAfterBytes`` a new segment is started, the state as of that
///   moment is written as `snapshot.json` (temporary file, fsync, rename, fsync of the folder) and the
///   older segments are deleted. A crash at any point leaves a snapshot plus segments that replay to
///   the same state, because lines already in the snapshot are skipped by sequence number.
/// - A failed write or fsync is never retried (after a failed fsync the kernel may have dropped the
///   pages): every write of that batch and every later one fails with ``StoreError/unavailable``
///   (503) while reads go on. In the background the store cuts the journal back to its last
///   acknowledged byte (all of it fsync'ed before), rebuilds memory from disk, and resumes writes
///   once a probe write and fsync in the data folder succeed, for example when a full disk has
///   space again. No restart is needed, and nothing unacknowledged survives in memory.
package actor JournalStore {
    /// The data folder.
    package nonisolated let folder: String
    /// The state and its journal position, behind a lock rather than the actor: reads (every
    /// authenticated request) take it for a lookup, and writes run their body, take the next
    /// sequence number and queue their line under it on the caller's own thread, so lines reach the
    /// journal in the order their changes were made without a hop onto the actor and back.
    private nonisolated let core: Mutex<Core>
    private var segment: Segment
    /// Lines not yet on disk and the writers waiting for them. Writers add to it; the flush thread
    /// takes from it batch after batch without coming back to the actor in between, so the next
    /// fsync starts as soon as the last one ends instead of queueing behind request tasks.
    private nonisolated let pending = Mutex(PendingLines())
    private var compacting = false
    /// The sequence number `snapshot.json` holds (0: none). When the state is no further on,
    /// ``close()`` has nothing to write.
    private var snapshotSeq: UInt64
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// A journal write failed and recovery has not yet succeeded.
    private var writeFailed = false
    /// Journal writes that failed so far: a snapshot taken before one of them may hold its changes.
    private var failedWrites = 0
    private var recovering = false
    private var recoveryStepRunning = false
    private var closed = false
    private let lock: DataFolderLock
    private let io: NIOThreadPool
    /// The thread compactions and backups encode snapshots on (seconds at a million users): on `io`,
    /// a backup taken during a compaction held both of its threads and every write waited.
    private let snapshots: NIOThreadPool
    private let compactAfterBytes: Int
    private let faults: StoreFaults?
    private let recoveryInterval: Duration
    private let logger: Logger
    /// For journal lines with records that are not written by hand; used under the ``core`` lock.
    private nonisolated let encoder = StoreCoding.encoder()

    private struct Core: ~Copyable {
        var state: StoreState
        /// The sequence number of the last line queued.
        var seq: UInt64
        /// Why writes are refused (``StoreError/closed``, or ``StoreError/unavailable`` after a failed
        /// write until recovery); nil while they are accepted.
        var refusal: StoreError?
    }

    private struct PendingLines: ~Copyable {
        /// Whether a flush loop runs (set by the writer that queues into an idle queue, cleared by the
        /// loop when it finds the queue empty).
        var flushing = false
        var bytes: [UInt8] = []
        /// Writers to resume once everything before them is on disk (a waiter with no bytes of its
        /// own waits for the batch being written now).
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// Batches fsync'ed so far.
        var syncedBatches = 0
        var isEmpty: Bool { bytes.isEmpty && waiters.isEmpty }

        /// Takes the queued bytes and waiters, leaving the queue empty.
        mutating func take() -> ([UInt8], [CheckedContinuation<Void, any Error>]) {
            defer {
                bytes = []
                waiters = []
            }
            return (bytes, waiters)
        }
    }

    private struct Segment {
        var number: Int
        var fd: Int32
        var path: String
        /// Journal bytes in the file, all acknowledged; the next batch is written here.
        var bytes: Int
        /// The file's size: past `bytes` it is reserved space reading as zeros.
        var allocated: Int
    }

    /// Journal space reserved at a time (``DurableFile/preallocate(_:from:length:)``).
    package static let preallocationChunk = 1 << 20
    /// At start-up, how far from the end of the last segment a torn line may be followed by whole
    /// lines and still be taken for a batch a crash cut short (its pages reached the disk out of
    /// order). Batches here are kilobytes; one larger than this, cut so, stops start-up as damage.
    package static let crashTailLimit = 1 << 20

    /// What start-up found on disk.
    package struct LoadReport: Sendable {
        /// Journal lines replayed on top of the snapshot.
        package var replayedLines: Int
        /// Whether a torn last line was dropped.
        package var droppedTornLine: Bool
    }

    /// What start-up found on disk.
    package nonisolated let loadReport: LoadReport

    private init(
        folder: String, state: StoreState, seq: UInt64, snapshotSeq: UInt64, segment: Segment, lock: DataFolderLock, io: NIOThreadPool,
        snapshots: NIOThreadPool, compactAfterBytes: Int, faults: StoreFaults?, recoveryInterval: Duration, logger: Logger, report: LoadReport
    ) {
        self.folder = folder
        self.snapshotSeq = snapshotSeq
        self.core = Mutex(Core(state: state, seq: seq, refusal: nil))
        self.segment = segment
        self.lock = lock
        self.io = io
        self.snapshots = snapshots
        self.compactAfterBytes = compactAfterBytes
        self.faults = faults
        self.recoveryInterval = recoveryInterval
        self.logger = logger
        self.loadReport = report
    }

    /// Opens the store in `folder` (created with mode 0700 if missing): takes the folder lock,
    /// loads the snapshot and replays the journal.
    /// - Parameter recoveryInterval: how often, after a failed write, the store checks whether the disk accepts writes again.
    /// - Throws: ``StoreError/locked(path:)`` when another process has the folder open;
    ///   ``StoreError/corrupt(path:line:reason:)`` naming the file and line of any damage other than a torn last line.
    package static func open(
        folder: String, compactAfterBytes: Int = 64 << 20, faults: StoreFaults? = nil,
        recoveryInterval: Duration = .seconds(1), logger: Logger
    ) async throws -> JournalStore {
        try DurableFile.makeDirectory(folder, mode: 0o700)
        let lock = try DataFolderLock(folder: folder)
        // Its own threads: fsyncs must not queue behind Argon2id hashes on the shared pool.
        let io = NIOThreadPool(numberOfThreads: 2)
        io.start()
        let snapshots = NIOThreadPool(numberOfThreads: 1)
        snapshots.start()
        do {
            let loaded = try await io.runIfActive { try load(folder: folder, logger: logger) }
            return JournalStore(
                folder: folder, state: loaded.state, seq: loaded.seq, snapshotSeq: loaded.snapshotSeq, segment: loaded.segment, lock: lock, io: io,
                snapshots: snapshots, compactAfterBytes: compactAfterBytes, faults: faults, recoveryInterval: recoveryInterval, logger: logger,
                report: loaded.report
            )
        } catch {
            lock.release()
            try? await io.shutdownGracefully()
            try? await snapshots.shutdownGracefully()
            throw error
        }
    }

    // MARK: Reading and writing

    /// Runs `body` on the current state (under its lock: keep it to lookups).
    package nonisolated func read<R: Sendable>(_ body: (StoreState) throws -> R) rethrows -> R {
        try core.withLock { try body($0.state) }
    }

    /// Runs `body` with exclusive access to the state and returns once its changes are on disk
    /// (``WriteDurability/eventual``: at once).
    ///
    /// Changes the body made before throwing are kept and persisted too (bodies should check before
    /// they change anything). A body that changes nothing returns without touching the disk.
    /// - Throws: ``StoreError/unavailable`` when the store can no longer persist; the body's own errors.
    package nonisolated func write<R: Sendable>(
        durability: WriteDurability = .synced, _ body: (inout StoreState) throws -> R
    ) async throws -> R {
        var outcome: Result<R, any Error> = .failure(StoreError.unavailable)
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            // nil: nothing to write; true: this writer starts the flush loop.
            let queued: Result<Bool?, any Error> = core.withLock { core in
                if let refusal = core.refusal { return .failure(refusal) }
                do { outcome = .success(try body(&core.state)) } catch { outcome = .failure(error) }
                let changes = core.state.takeChanges()
                guard !changes.isEmpty else { return .success(nil) }
                var line: [UInt8]
                do { line = try JournalLine(seq: core.seq + 1, changes: changes).encoded(with: encoder) } catch { return .failure(error) }
                core.seq += 1
                line.append(0x0A)
                // Queued while the state is still locked: the journal's order is the order of the changes.
                return .success(pending.withLock { p in
                    p.bytes.append(contentsOf: line)
                    if durability == .synced { p.waiters.append(c) }
                    guard !p.flushing else { return false }
                    p.flushing = true
                    return true
                })
            }
            switch queued {
            case .failure(let error): c.resume(throwing: error)
            case .success(nil): c.resume()
            case .success(let startsFlushing?):
                if durability == .eventual { c.resume() }
                if startsFlushing { Task { await self.flushLoop() } }
            }
        }
        return try outcome.get()
    }

    /// Returns once every change made so far (including ``WriteDurability/eventual`` ones) is on disk.
    /// - Throws: ``StoreError/unavailable`` when they could not be persisted.
    package nonisolated func waitUntilDurable() async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            // Behind every line queued so far, whether it waits or is being written now.
            let queued = pending.withLock { p -> Bool in
                guard p.flushing else { return false }
                p.waiters.append(c)
                return true
            }
            guard !queued else { return }
            if case .unavailable? = core.withLock({ $0.refusal }) { c.resume(throwing: StoreError.unavailable) } else { c.resume() }
        }
    }

    /// Number of fsync'ed batches so far; fewer than the writes when concurrent writers share fsyncs.
    package var syncedBatches: Int { pending.withLock { $0.syncedBatches } }

    /// Whether the store still accepts writes.
    package var isWritable: Bool { !writeFailed && !closed }

    /// What the flush thread did before it came back to the actor.
    private struct FlushRun: Sendable {
        var bytes = 0
        var allocated: Int
        var failure: (any Error)?
    }

    private func flushLoop() async {
        while true {
            let fd = segment.fd, path = segment.path, start = segment.bytes, allocated = segment.allocated
            // Back to the actor once the segment is due for compaction (at least one batch per run,
            // so a compaction that cannot start is retried after each batch, not in a tight loop).
            let stopAfter = compacting ? Int.max : max(compactAfterBytes - segment.bytes, 1)
            let run: FlushRun
            do {
                run = try await io.runIfActive {
                    self.flushBatches(fd: fd, path: path, start: start, allocated: allocated, stopAfter: stopAfter)
                }
            } catch {
                run = FlushRun(allocated: allocated, failure: error)  // the pool is shutting down; the queue is failed below
            }
            segment.bytes += run.bytes
            segment.allocated = run.allocated
            StoreMetrics.journalBytes.record(segment.bytes)
            if let error = run.failure {
                fail(error)
                pending.withLock { $0.flushing = false }
                break
            }
            if segment.bytes >= compactAfterBytes, !compacting {
                await startCompaction()
            }
            // Checked and cleared under the queue's lock, so a line queued meanwhile is never missed:
            // either it is seen here or its writer starts the next loop.
            if pending.withLock({ p in
                guard p.isEmpty else { return false }
                p.flushing = false
                return true
            }) { break }
        }
        resumeIdleWaitersIfIdle()
    }

    /// On the flush thread: writes and fsyncs what is queued, resumes its writers, and repeats until
    /// the queue is empty, `stopAfter` bytes are written, or a write fails (that batch's writers get
    /// 503 here; those queued behind it in ``fail(_:)``).
    private nonisolated func flushBatches(fd: Int32, path: String, start: Int, allocated: Int, stopAfter: Int) -> FlushRun {
        var run = FlushRun(allocated: allocated)
        while run.bytes < stopAfter {
            let (bytes, batch) = pending.withLock { $0.take() }
            if bytes.isEmpty && batch.isEmpty { break }
            if !bytes.isEmpty {
                do {
                    let position = start + run.bytes
                    if faults?.shouldFail() == true {
                        // As a real full disk does: part of the batch lands, then write(2) fails.
                        try DurableFile.writeAll(fd, Array(bytes.prefix(bytes.count / 2)), at: position, path: path)
                        throw StoreError.io(operation: "write", path: path, errno: ENOSPC)
                    }
                    if position + bytes.count > run.allocated {
                        // Never below `position`: reserving writes zeros, and after a reservation
                        // that failed, batches went on past `allocated`.
                        let from = max(run.allocated, position)
                        let length = max(Self.preallocationChunk, position + bytes.count - from)
                        if faults?.refusesReservations != true, DurableFile.preallocate(fd, from: from, length: length) {
                            run.allocated = from + length
                        }
                    }
                    let started = ContinuousClock.now
                    try DurableFile.writeAll(fd, bytes, at: position, path: path)
                    try DurableFile.sync(fd, path: path)
                    StoreMetrics.fsync.recordInterval(since: started)
                } catch {
                    for w in batch { w.resume(throwing: StoreError.unavailable) }
                    run.failure = error
                    return run
                }
                run.bytes += bytes.count
                pending.withLock { $0.syncedBatches += 1 }
            }
            // A waiter without bytes of its own waited for the batch before: it is on disk.
            for w in batch { w.resume() }
        }
        return run
    }

    private func fail(_ error: any Error) {
        logger.critical(
            "store: a journal write failed; refusing writes (503) until the disk accepts them again, reads go on",
            metadata: ["error": "\(error)", "store.folder": "\(folder)"]
        )
        writeFailed = true
        failedWrites += 1
        core.withLock { $0.refusal = .unavailable }
        // Lines queued behind the failed batch are never written: memory is rebuilt from disk.
        let waiting = pending.withLock { $0.take().1 }
        for w in waiting { w.resume(throwing: StoreError.unavailable) }
        if !recovering {
            recovering = true
            Task { await self.recover() }
        }
    }

    // MARK: Recovery

    /// Brings the store back from a failed write without a restart: cut the journal back to the last
    /// acknowledged byte, check that the disk takes a write and an fsync, rebuild memory from disk.
    /// Repeats every ``recoveryInterval`` until it succeeds or the store is closed.
    private func recover() async {
        var attempts = 0
        while !closed {
            await waitUntilIdle()
            if closed { break }
            recoveryStepRunning = true
            let segment = self.segment
            let folder = self.folder
            let faults = self.faults
            let logger = self.logger
            let result: Result<Loaded, any Error>
            do {
                result = .success(try await io.runIfActive { () -> Loaded in
                    // Every byte before `segment.bytes` was fsync'ed before it was acknowledged;
                    // what follows belongs to the failed batch, which was answered 503.
                    try DurableFile.check(ftruncate(segment.fd, off_t(segment.bytes)), "ftruncate", segment.path)
                    try DurableFile.sync(segment.fd, path: segment.path)
                    try Self.probeWrite(folder: folder, faults: faults)
                    return try Self.load(folder: folder, logger: logger)
                })
            } catch {
                result = .failure(error)
            }
            recoveryStepRunning = false
            switch result {
            case .success(let loaded):
                if closed {
                    Glibc.close(loaded.segment.fd)
                } else {
                    Glibc.close(self.segment.fd)
                    // The old state leaves under the lock but is freed on an I/O thread: freed in
                    // place, under the lock every read takes, it held reads up for 0.2-0.3 s at 300k users.
                    let retired = core.withLock { core -> StateHandoff in
                        let old = StateHandoff(core.state)
                        core.state = loaded.state
                        core.seq = loaded.seq
                        core.refusal = nil
                        return old
                    }
                    io.submit { _ in _ = retired.take() }
                    self.segment = loaded.segment
                    self.snapshotSeq = loaded.snapshotSeq
                    writeFailed = false
                    logger.notice(
                        "store: the disk accepts writes again; writes resumed",
                        metadata: ["store.folder": "\(folder)", "store.seq": "\(loaded.seq)", "store.attempts": "\(attempts + 1)"]
                    )
                }
                recovering = false
                resumeIdleWaitersIfIdle()
                return
            case .failure(let error):
                attempts += 1
                // One line now and then, not one per second, while the disk stays full.
                if attempts == 1 || attempts.isMultiple(of: 60) {
                    logger.error(
                        "store: the disk still refuses writes; writes stay refused (503)",
                        metadata: ["error": "\(error)", "store.folder": "\(folder)", "store.attempts": "\(attempts)"]
                    )
                }
                resumeIdleWaitersIfIdle()
                try? await Task.sleep(for: recoveryInterval)
            }
        }
        recovering = false
    }

    /// Writes and fsyncs a 64 KiB scratch file in the data folder, then removes it: a disk that
    /// passes this takes the next journal batch too.
    private static func probeWrite(folder: String, faults: StoreFaults?) throws {
        let path = folder + "/.write-probe"
        if faults?.shouldFail() == true { throw StoreError.io(operation: "write", path: path, errno: ENOSPC) }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try DurableFile.check(fd, "open", path)
        defer {
            Glibc.close(fd)
            unlink(path)
        }
        try DurableFile.writeAll(fd, [UInt8](repeating: 0, count: 64 << 10), path: path)
        try DurableFile.sync(fd, path: path)
    }

    // MARK: Compaction

    private func startCompaction() async {
        compacting = true
        // The state holds every line queued so far, and the last of them may not be on disk yet:
        // the snapshot is written only once they are, and not at all if their batch fails (its
        // writers were answered 503, and recovery must not find their changes in a snapshot).
        let (source, snapshotSeq) = core.withLock { (StateHandoff($0.state), $0.seq) }
        let failuresAtHandoff = failedWrites
        faults?.compactionStarts()
        let newNumber = segment.number + 1
        let folder = self.folder
        do {
            let newSegment = try await io.runIfActive { try Self.createSegment(folder: folder, number: newNumber) }
            Glibc.close(segment.fd)
            segment = newSegment
        } catch {
            // The old segment stays current; compaction is retried after the next batch.
            logger.error("store: could not start a new journal segment", metadata: ["error": "\(error)"])
            compacting = false
            return
        }
        let faults = self.faults
        Task {
            do {
                try await self.waitUntilDurable()
                guard self.failedWrites == failuresAtHandoff else { throw StoreError.unavailable }
                try await snapshots.runIfActive {
                    faults?.snapshotStarts()
                    let started = ContinuousClock.now
                    let snapshotState = source.take()
                    try Self.writeSnapshot(snapshotState, seq: snapshotSeq, folder: folder, inBackground: true)
                    try Self.deleteSegments(folder: folder, below: newNumber)
                    StoreMetrics.snapshot.recordInterval(since: started)
                }
                self.snapshotSeq = snapshotSeq
                logger.info("store: snapshot written", metadata: ["store.seq": "\(snapshotSeq)"])
            } catch {
                _ = try? await snapshots.runIfActive { source.release() }  // freed off the actor, as after a snapshot
                logger.error("store: snapshot failed; the journal keeps everything", metadata: ["error": "\(error)"])
            }
            self.compactionFinished()
        }
    }

    private func compactionFinished() {
        compacting = false
        resumeIdleWaitersIfIdle()
    }

    private var flushing: Bool { pending.withLock { $0.flushing } }

    private func resumeIdleWaitersIfIdle() {
        guard !flushing, !compacting, !recoveryStepRunning else { return }
        for w in idleWaiters { w.resume() }
        idleWaiters = []
    }

    private func waitUntilIdle() async {
        if !flushing, !compacting, !recoveryStepRunning { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Runs `body` on the snapshot thread with the current state and its sequence number (every
    /// acknowledged write is in it); writes go on meanwhile. The state is freed on that thread.
    package func withSnapshot<R: Sendable>(_ body: @escaping @Sendable (StoreState, UInt64) throws -> R) async throws -> R {
        let (source, seq) = core.withLock { (StateHandoff($0.state), $0.seq) }
        let failuresAtHandoff = failedWrites
        // Only durable lines may be in a backup: wait for the last ones, and give up if they failed.
        do {
            try await waitUntilDurable()
            guard failedWrites == failuresAtHandoff else { throw StoreError.unavailable }
        } catch {
            _ = try? await snapshots.runIfActive { source.release() }
            throw error
        }
        let faults = self.faults
        return try await snapshots.runIfActive {
            faults?.snapshotStarts()
            let state = source.take()
            return try body(state, seq)
        }
    }

    /// Forces a snapshot now and starts a fresh journal (used by tests).
    package func compact() async throws {
        // Hold the flush loop's place while the segment is switched: writers go on queueing, but no
        // batch may be written to the segment being retired.
        while true {
            await waitUntilIdle()
            guard !writeFailed else { throw StoreError.unavailable }
            if pending.withLock({ p in
                guard !p.flushing else { return false }
                p.flushing = true
                return true
            }) { break }
        }
        await startCompaction()
        let queued = pending.withLock { p in
            guard p.isEmpty else { return true }
            p.flushing = false
            return false
        }
        if queued { await flushLoop() } else { resumeIdleWaitersIfIdle() }
        await waitUntilIdle()
    }

    /// Waits for pending writes, writes a final snapshot (unless a write failed), and releases the folder lock.
    package func close() async {
        guard !closed else { return }
        closed = true
        // New writes are refused from here; those already queued are flushed before the snapshot.
        core.withLock { $0.refusal = .closed }
        await waitUntilIdle()
        let (state, seq) = core.withLock { ($0.state, $0.seq) }
        // A store opened and closed without a write (or with every write already in the snapshot)
        // leaves the folder as it is: rewriting a million users' snapshot took seconds.
        if !writeFailed, seq != snapshotSeq {
            let folder = self.folder
            let number = segment.number
            do {
                // Everything is in the snapshot now, the current segment included.
                try await io.runIfActive {
                    try Self.writeSnapshot(state, seq: seq, folder: folder)
                    try Self.deleteSegments(folder: folder, below: number + 1)
                }
            } catch {
                logger.error("store: final snapshot failed; the journal keeps everything", metadata: ["error": "\(error)"])
            }
        }
        Glibc.close(segment.fd)
        lock.release()
        try? await io.shutdownGracefully()
        try? await snapshots.shutdownGracefully()
    }

    // MARK: Files

    private static func segmentName(_ number: Int) -> String { String(format: "journal-%010d.jsonl", number) }

    private static func segmentNumbers(folder: String) throws -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { name -> Int? in
            guard name.hasPrefix("journal-"), name.hasSuffix(".jsonl") else { return nil }
            return Int(name.dropFirst("journal-".count).dropLast(".jsonl".count))
        }.sorted()
    }

    private static func createSegment(folder: String, number: Int) throws -> Segment {
        let path = folder + "/" + segmentName(number)
        let fd = try DurableFile.openForWriting(path)
        let allocated = DurableFile.preallocate(fd, from: 0, length: preallocationChunk) ? preallocationChunk : 0
        try DurableFile.syncDirectory(folder)
        return Segment(number: number, fd: fd, path: path, bytes: 0, allocated: allocated)
    }

    private static func deleteSegments(folder: String, below number: Int) throws {
        for n in try segmentNumbers(folder: folder) where n < number {
            let path = folder + "/" + segmentName(n)
            try DurableFile.check(unlink(path), "unlink", path)
        }
        try DurableFile.syncDirectory(folder)
    }

    package static func writeSnapshot(_ state: StoreState, seq: UInt64, folder: String, inBackground: Bool = false) throws {
        try DurableFile.replace(folder + "/snapshot.json") { write in
            try SnapshotFile.write(state, seq: seq, inBackground: inBackground, to: write)
        }
    }

    private struct Loaded {
        var state: StoreState
        var seq: UInt64
        /// The sequence number of the snapshot read (0: none).
        var snapshotSeq: UInt64
        var segment: Segment
        var report: LoadReport
    }

    private static func load(folder: String, logger: Logger) throws -> Loaded {
        let decoder = StoreCoding.decoder()
        var state = StoreState()
        var seq: UInt64 = 0
        var snapshotSeq: UInt64 = 0
        let snapshotPath = folder + "/snapshot.json"
        unlink(snapshotPath + ".tmp")  // an unfinished snapshot from a crash; the old one is intact
        if let bytes = try DurableFile.read(snapshotPath) {
            let snapshot = try SnapshotFile.decodeChunks(bytes, path: snapshotPath)
            state = StoreState.loading(snapshot: snapshot.chunks)
            seq = snapshot.seq
            snapshotSeq = snapshot.seq
        }

        var report = LoadReport(replayedLines: 0, droppedTornLine: false)
        let numbers = try segmentNumbers(folder: folder)
        var lastLineSeq: UInt64?
        var lastSegmentEnd = 0
        for (index, number) in numbers.enumerated() {
            let path = folder + "/" + segmentName(number)
            let bytes = try DurableFile.read(path) ?? []
            let isLastSegment = index == numbers.count - 1
            var lineStart = 0
            var lineNumber = 0
            while lineStart < bytes.count {
                lineNumber += 1
                let newline = Self.firstNewline(in: bytes, from: lineStart)
                let lineEnd = newline ?? bytes.count
                let line = bytes[lineStart..<lineEnd]
                let torn = newline == nil || line.contains(0)
                // Space reserved ahead of the writes reads as zeros: the end of this segment's lines.
                if torn, Self.isZero(bytes, from: lineStart) { break }
                if torn {
                    // After a power cut, a batch's later pages can be on disk while an earlier one is
                    // not: lines after a torn one are then the rest of that unacknowledged batch. Only
                    // within ``crashTailLimit`` of the end is that taken for a crash; further is damage.
                    let dataEnd = Self.endOfData(bytes)
                    let linesFollow = newline != nil && bytes[(lineEnd + 1)..<max(dataEnd, lineEnd + 1)].contains(where: { $0 != 0 && $0 != 0x0A })
                    guard isLastSegment, !linesFollow || dataEnd - lineStart <= Self.crashTailLimit else {
                        throw StoreError.corrupt(path: path, line: lineNumber, reason: "unreadable journal line before the end of the journal")
                    }
                    if linesFollow {
                        logger.warning(
                            "store: dropping a torn journal line and the lines after it (a crash cut a write short; it was never acknowledged)",
                            metadata: ["file": "\(path)", "line": "\(lineNumber)", "bytes": "\(dataEnd - lineStart)"]
                        )
                    } else {
                        logger.warning(
                            "store: dropping a torn last journal line (a crash interrupted its write; it was never acknowledged)",
                            metadata: ["file": "\(path)", "line": "\(lineNumber)"]
                        )
                    }
                    try truncateFile(path, to: lineStart)
                    report.droppedTornLine = true
                    break
                }
                let entry: JournalLine
                if let fast = bytes.withUnsafeBufferPointer({ JournalLine.fastDecode(UnsafeBufferPointer(rebasing: $0[lineStart..<lineEnd])) }) {
                    entry = fast
                } else {
                    do { entry = try decoder.decode(JournalLine.self, from: Data(line)) } catch {
                        throw StoreError.corrupt(path: path, line: lineNumber, reason: "not a valid journal line (\(error))")
                    }
                }
                if let last = lastLineSeq, entry.seq != last + 1 {
                    throw StoreError.corrupt(path: path, line: lineNumber, reason: "sequence \(entry.seq) follows \(last)")
                }
                lastLineSeq = entry.seq
                if entry.seq > seq {
                    if seq > 0, entry.seq != seq + 1 {
                        throw StoreError.corrupt(path: path, line: lineNumber, reason: "sequence \(entry.seq) leaves a gap after \(seq)")
                    }
                    for change in entry.changes {
                        // Only damage or a hand edit can name a session the journal never made; the
                        // change is skipped, as the session's later lines would be, but not silently.
                        if case .rotateSession(let r) = change, state.sessions[r.id] == nil {
                            logger.warning(
                                "store: a journal line rotates a session that does not exist; that change is skipped",
                                metadata: ["file": "\(path)", "line": "\(lineNumber)", "session.id": "\(r.id)"]
                            )
                        }
                        state.apply(change)
                    }
                    seq = entry.seq
                    report.replayedLines += 1
                }
                lineStart = lineEnd + 1
            }
            if isLastSegment { lastSegmentEnd = min(lineStart, bytes.count) }
        }

        let current: Segment
        if let last = numbers.last {
            let path = folder + "/" + segmentName(last)
            let fd = try DurableFile.openForWriting(path)
            let size = Int(max(lseek(fd, 0, SEEK_END), 0))
            current = Segment(number: last, fd: fd, path: path, bytes: lastSegmentEnd, allocated: size)
        } else {
            current = try createSegment(folder: folder, number: 1)
        }
        return Loaded(state: state, seq: seq, snapshotSeq: snapshotSeq, segment: current, report: report)
    }

    /// The index of the next `\n` at or after `start` (memchr: start-up scans every journal byte).
    private static func firstNewline(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            guard start < raw.count, let found = memchr(raw.baseAddress! + start, 0x0A, raw.count - start) else { return nil }
            return raw.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
    }

    /// The index after the last byte that is not zero (reserved space no write has reached reads as zeros).
    private static func endOfData(_ bytes: [UInt8]) -> Int {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 { end -= 1 }
        return end
    }

    /// Whether every byte from `start` on is zero (reserved space no write has reached).
    private static func isZero(_ bytes: [UInt8], from start: Int) -> Bool {
        bytes.withUnsafeBytes { raw in
            var i = start
            while i < raw.count, i % 8 != 0 {
                if raw[i] != 0 { return false }
                i += 1
            }
            while i + 8 <= raw.count {
                if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) != 0 { return false }
                i += 8
            }
            while i < raw.count {
                if raw[i] != 0 { return false }
                i += 1
            }
            return true
        }
    }

    private static func truncateFile(_ path: String, to length: Int) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CLOEXEC)
        try DurableFile.check(fd, "open", path)
        defer { Glibc.close(fd) }
        try DurableFile.check(ftruncate(fd, off_t(length)), "ftruncate", path)
        try DurableFile.check(fsync(fd), "fsync", path)
    }
}

/// A state handed to another thread to be used and released there: freeing a large state takes a
/// while, and must not happen on the store's actor or under the state's lock.
///
/// A compaction's or a backup's snapshot: writers copy each shard they change while a snapshot
/// shares the state, so when the snapshot lets go, the old copies (after a compaction at a million
/// users, most of a million records) are freed with it. Captured by the task that started the
/// snapshot, they were freed on the actor, which the journal's flush loop needs between batches:
/// every write waited 150-420 ms. The state recovery replaces: freed under the lock, it held every
/// read up.
final class StateHandoff: @unchecked Sendable {
    private var state: StoreState?

    package init(_ state: StoreState) { self.state = state }

    /// The state, leaving the box empty, so that the caller's copy is the last reference. Called
    /// once, on the thread that is to free it.
    package func take() -> StoreState {
        defer { state = nil }
        return state!
    }

    /// Drops the state unused (if ``take()`` has not taken it).
    package func release() { state = nil }
}

/// The store's metrics: `authd_store_fsync_seconds`, `authd_store_snapshot_seconds`, `authd_store_journal_bytes`.
enum StoreMetrics {
    package static let fsync = Timer(label: "authd_store_fsync_seconds")
    package static let snapshot = Timer(label: "authd_store_snapshot_seconds")
    package static let journalBytes = Gauge(label: "authd_store_journal_bytes")
}

extension Timer {
    package func recordInterval(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(Int64(elapsed.components.seconds) * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}

extension JournalStore: AuthStore {
    /// Runs `body` on the whole in-memory state (`keys` are for stores that load rows).
    package nonisolated func read<R: Sendable>(_ keys: [StoreKey], _ body: @Sendable (StoreState) throws -> R) throws -> R {
        try read(body)
    }

    /// Runs `body` with exclusive access to the whole state (`keys` are for stores that lock rows).
    package nonisolated func write<R: Sendable>(
        _ keys: [StoreKey], durability: WriteDurability, _ body: @Sendable (inout StoreState) throws -> R
    ) async throws -> R {
        try await write(durability: durability, body)
    }

    /// One process holds the data folder's lock: never shared.
    package nonisolated var isShared: Bool { false }

    /// Counts from memory.
    package func counts() -> StoreCounts {
        core.withLock { StoreCounts(users: $0.state.users.count, sessions: $0.state.sessions.count) }
    }
}
