/// Failures of the durable store.
package enum StoreError: Error, CustomStringConvertible, Sendable {
    /// Another process holds the data folder's lock.
    case locked(path: String)
    /// A file could not be read or written; `errno` says why.
    case io(operation: String, path: String, errno: Int32)
    /// A snapshot or journal line that is not a torn tail: start-up stops here.
    case corrupt(path: String, line: Int?, reason: String)
    /// A write or fsync failed; the store refuses writes until the disk accepts them again.
    case unavailable
    /// The store was closed.
    case closed

    package var description: String {
        switch self {
        case .locked(let path):
            return "the data folder is in use by another authd process (lock held on \(path))"
        case .io(let op, let path, let code):
            return "\(op) failed on \(path): \(String(cString: strerror(code)))"
        case .corrupt(let path, let line, let reason):
            return "\(path)\(line.map { ", line \($0)" } ?? ""): \(reason)"
        case .unavailable:
            return "the store cannot persist changes"
        case .closed:
            return "the store is closed"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
