package import Foundation

/// The usual refresh rotation of a session as a change of its own: what came and went, not the
/// whole record.
///
/// A session remembers its last 16 retired token hashes, so its whole record is about 2 KB, and
/// `POST /refresh` wrote it to the journal on every rotation. This change is about a tenth of that
/// (profiled: encoding the record and fsyncing its bytes were the largest store costs of a refresh).
/// It is only made when it rebuilds the new record exactly (``init(from:to:)`` checks), and it is
/// only ever applied in journal order on the record it was made from, so it needs no idempotence.
package struct SessionRotation: Codable, Sendable, Equatable {
    /// The session.
    package let id: UUID
    /// Retired hashes that fell off the front of the list.
    package let dropped: Int
    /// When the hashes that were current became retired.
    package let retiredAt: Date
    /// The new current hashes.
    package let refreshHashes: [String]
    /// The new `last_used_at`.
    package let lastUsedAt: Date
    /// The new `expires_at`.
    package let expiresAt: Date

    /// The rotation that turns `old` into `new`; nil when `new` is anything else (the store then
    /// writes the whole record).
    package init?(from old: SessionRecord, to new: SessionRecord) {
        let appended = old.refreshHashes.count
        let dropped = old.retired.count + appended - new.retired.count
        // Everything else (id, owner, device, amr) is checked by comparing the rebuilt record below.
        guard appended > 0, dropped >= 0, dropped <= old.retired.count,
            let retiredAt = new.retired.last?.retiredAt
        else { return nil }
        self.init(id: new.id, dropped: dropped, retiredAt: retiredAt, refreshHashes: new.refreshHashes, lastUsedAt: new.lastUsedAt, expiresAt: new.expiresAt)
        guard applied(to: old) == new else { return nil }
    }

    /// Creates a rotation from its parts (as the journal holds them); `dropped` is at least zero.
    package init(id: UUID, dropped: Int, retiredAt: Date, refreshHashes: [String], lastUsedAt: Date, expiresAt: Date) {
        self.id = id
        self.dropped = max(0, dropped)
        self.retiredAt = retiredAt
        self.refreshHashes = refreshHashes
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
    }

    /// The session `old` becomes: its current hashes retired at ``retiredAt``, the oldest
    /// ``dropped`` retired ones forgotten, ``refreshHashes`` current.
    package func applied(to old: SessionRecord) -> SessionRecord {
        var new = old
        // Built once at its final size (on every refresh): trimming and appending in place copied
        // the shared list and then grew it.
        let kept = old.retired.dropFirst(min(dropped, old.retired.count))
        var retired: [RetiredRefreshToken] = []
        retired.reserveCapacity(kept.count + old.refreshHashes.count)
        retired += kept
        for hash in old.refreshHashes { retired.append(RetiredRefreshToken(hash: hash, retiredAt: retiredAt)) }
        new.retired = retired
        new.refreshHashes = refreshHashes
        new.lastUsedAt = lastUsedAt
        new.expiresAt = expiresAt
        return new
    }

    /// Reads a rotation; a negative `dropped` is damage, not a rotation.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let dropped = try c.decode(Int.self, forKey: .dropped)
        guard dropped >= 0 else { throw DecodingError.dataCorruptedError(forKey: .dropped, in: c, debugDescription: "negative") }
        self.init(
            id: try c.decode(UUID.self, forKey: .id), dropped: dropped, retiredAt: try c.decode(Date.self, forKey: .retiredAt),
            refreshHashes: try c.decode([String].self, forKey: .refreshHashes), lastUsedAt: try c.decode(Date.self, forKey: .lastUsedAt),
            expiresAt: try c.decode(Date.self, forKey: .expiresAt))
    }

    package enum CodingKeys: String, CodingKey {
        case id, dropped, retiredAt = "retired_at", refreshHashes = "refresh_hashes", lastUsedAt = "last_used_at", expiresAt = "expires_at"
    }
}
