#if canImport(Glibc)
package import Glibc
#elseif canImport(Darwin)
package import Darwin
#endif
import Foundation

/// The POSIX calls behind durable writes: full writes, fsync of files and of directories,
/// and replacing a file so that a crash leaves either the old or the new one.
///
/// Foundation's `.atomic` write renames but does not fsync the file or its directory, so a crash
/// can leave an empty file behind: the sequence is spelled out here instead.
package enum DurableFile {
    package static func check(_ rc: Int32, _ operation: String, _ path: String) throws {
        if rc < 0 { throw StoreError.io(operation: operation, path: path, errno: errno) }
    }

    /// Opens (creating with mode 0600) a file for appending.
    package static func openForAppend(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        try check(fd, "open", path)
        return fd
    }

    /// Opens (creating with mode 0600) a file for writing at explicit offsets.
    package static func openForWriting(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try check(fd, "open", path)
        return fd
    }

    /// Writes every byte, at the file's offset or at `position`, retrying short writes and EINTR.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], at position: Int? = nil, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                let start = buffer.baseAddress! + offset, count = bytes.count - offset
                return position.map { pwrite(fd, start, count, off_t($0 + offset)) } ?? write(fd, start, count)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(operation: "write", path: path, errno: errno)
            }
            offset += n
        }
    }

    /// Reserves `length` bytes from `start` and writes zeros over them (the file grows, reading as
    /// zeros), so that later writes there change neither the file's size nor its block map and
    /// `fdatasync` writes the data alone. False where the file system cannot reserve (the writes
    /// then grow the file as usual) or the zeros could not be written.
    ///
    /// Reserving alone (`posix_fallocate`) spared the inode's size but not its block map: ext4 marks
    /// reserved blocks unwritten, and the first write into each block changes the map, which that
    /// write's `fdatasync` must persist too. With the zeros written once here, 8 KB batches synced
    /// about a third more per second (docs/benchmarks.md). The zeros
    /// reach the disk with the next batch's `fdatasync`; the space is reserved first, so until then
    /// it reads as zeros whatever lands.
    package static func preallocate(_ fd: Int32, from start: Int, length: Int) -> Bool {
        #if os(Linux)
        guard posix_fallocate(fd, off_t(start), off_t(length)) == 0 else { return false }
        var offset = 0
        while offset < length {
            let n = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, min($0.count, length - offset), off_t(start + offset)) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
        #else
        return false
        #endif
    }

    /// What ``preallocate(_:from:length:)`` writes, a piece at a time.
    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// Flushes a file's data to the device.
    package static func sync(_ fd: Int32, path: String) throws {
        #if os(Linux)
        try check(fdatasync(fd), "fdatasync", path)
        #else
        try check(fsync(fd), "fsync", path)
        #endif
    }

    /// Flushes a directory, making renames, creations and deletions in it durable.
    package static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try check(fd, "open directory", path)
        defer { close(fd) }
        try check(fsync(fd), "fsync directory", path)
    }

    /// Replaces `path` with `bytes`: write a temporary file, fsync it, rename it over, fsync the directory.
    package static func replace(_ path: String, with bytes: [UInt8], mode: mode_t = 0o600) throws {
        try replace(path, mode: mode) { write in try write(bytes) }
    }

    /// ``replace(_:with:mode:)`` with the bytes handed over as `body` makes them: each call of
    /// `write` appends to the temporary file (calls must not overlap), so the whole content never
    /// needs to be in memory at once.
    package static func replace(_ path: String, mode: mode_t = 0o600, writing body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws {
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        try check(fd, "open", tmp)
        do {
            try body { try writeAll(fd, $0, path: tmp) }
            try check(fsync(fd), "fsync", tmp)
        } catch {
            close(fd)
            unlink(tmp)
            throw error
        }
        close(fd)
        try check(rename(tmp, path), "rename", path)
        try syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Creates a directory (and parents) with the given mode if missing, and tightens an existing one to it.
    package static func makeDirectory(_ path: String, mode: mode_t) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: Int(mode)])
        try check(chmod(path, mode), "chmod", path)
    }

    /// Reads a whole file, or nil when it does not exist.
    package static func read(_ path: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StoreError.io(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        // Read straight into an array of the file's size: growing one by appending copied a large
        // snapshot several times over. A file that grows meanwhile is read to its end all the same.
        var info = stat()
        try check(fstat(fd, &info), "fstat", path)
        // The file's size first, straight into the array (no bounce buffer: a copy of a few hundred
        // MB at a million users); then whatever it grew by meanwhile.
        var readError: Int32 = 0
        var result = [UInt8](unsafeUninitializedCapacity: Int(info.st_size)) { buffer, count in
            while count < buffer.count {
                let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    readError = errno
                    return
                }
                if n == 0 { return }
                count += n
            }
        }
        if readError != 0 { throw StoreError.io(operation: "read", path: path, errno: readError) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(operation: "read", path: path, errno: errno)
            }
            if n == 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
    }
}
