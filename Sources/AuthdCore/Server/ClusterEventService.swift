import AuthKernel
import Foundation
import Logging
import ServiceLifecycle

/// Hands other instances' events to this one: approval requests to its subscribers, key rotations
/// to its key ring (and re-reads the keys every minute, in case a notification was lost).
struct ClusterEventService: Service {
    let events: any ClusterEvents
    let approvals: ApprovalService
    let keys: any ServerKeys
    let keyRing: SigningKeyRing
    let rsa: (any RSASigning)?
    let clock: any AuthClock
    let logger: Logger

    func run() async throws {
        let reload: @Sendable () async -> Void = { [keys, keyRing, rsa, clock, logger] in
            do {
                let loaded = try await keys.loadOrCreateSigningKeys(now: clock.now(), logger: logger)
                if keyRing.replace(with: loaded) {
                    logger.notice("signing keys changed on another instance; reloaded", metadata: ["key.kid": "\(keyRing.active.kid)"])
                }
                if let rsa, try await rsa.reload() {
                    logger.notice("the RSA key changed on another instance; reloaded", metadata: ["key.kid": "\(rsa.kid)"])
                }
            } catch {
                logger.warning("could not reload the signing keys", metadata: ["error": "\(error)"])
            }
        }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await events.listen(
                        onApproval: { id, userID in await approvals.deliver(id: id, userID: userID) },
                        onKeysChanged: reload
                    )
                }
                group.addTask {
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: .seconds(60)) } catch { return }
                        await reload()
                    }
                }
            }
        }
    }
}
