import AuthStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on `DATA/authd.lock`, held while a process has the data folder open.
///
/// The lock belongs to the open file description, so a second open in the same process is refused
/// too, and the kernel releases it when the process dies: a crash never leaves a stale lock.
package final class DataFolderLock: Sendable {
    /// Path of the lock file.
    package let path: String
    private let fd: Int32

    /// Takes the lock or throws ``StoreError/locked(path:)`` at once.
    package init(folder: String) throws {
        path = folder + "/authd.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try DurableFile.check(fd, "open", path)
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw StoreError.locked(path: path) }
            throw StoreError.io(operation: "flock", path: path, errno: code)
        }
        self.fd = fd
    }

    /// Releases the lock.
    package func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
