import AuthKernel
import Testing

/// Hashes brought over from another system (contract §11), made by Python's `bcrypt`, `hashlib`
/// (Django's PBKDF2 format) and `argon2-cffi`: each verifies with its password and no other, and
/// costlier parameters than the bounds are refused before any work.
struct ImportedPasswordHashTests {
    static let password = "correct horse battery"
    static let hashes = [
        "$2b$04$pgxRUqpoOU6vWceTKbSjKeQFmiRdd2u8CaByU4Jft2CmytirFjeKm",
        "pbkdf2_sha256$1000$Q8qzJvYCbWkd$yfFpy5MXMu2vVWdmk/cgRNFPEWnEZ5A7PfqBjDDP0mE=",
        "bcrypt_sha256$$2b$04$4EI/aghGCDlD6rVRS5I.vObQzOiIlblAs0.0T0Taoo/xjcgbqcXf2",
        "$argon2id$v=19$m=8192,t=1,p=4$SaOKujm2vQReHXB55+DFUQ$EsOtIwpyde/wpniJQPh5+dkqboHqyz5sptrQGUYhvfc",
        "argon2$argon2id$v=19$m=8192,t=1,p=4$SaOKujm2vQReHXB55+DFUQ$EsOtIwpyde/wpniJQPh5+dkqboHqyz5sptrQGUYhvfc",
    ]

    @Test(arguments: hashes)
    func verifiesTheRightPasswordOnly(_ hash: String) {
        #expect(ImportedPasswordHash.verify(Self.password, hash: hash))
        #expect(!ImportedPasswordHash.verify("correct horse batterY", hash: hash))
        #expect(!ImportedPasswordHash.verify("", hash: hash))
    }

    @Test func formatsAndTheirBounds() throws {
        #expect(try ImportedPasswordHash.format(of: Self.hashes[0]).get() == .bcrypt(cost: 4))
        #expect(try ImportedPasswordHash.format(of: Self.hashes[1]).get() == .djangoPBKDF2(iterations: 1000))
        #expect(try ImportedPasswordHash.format(of: Self.hashes[2]).get() == .djangoBcryptSHA256(cost: 4))
        #expect(try ImportedPasswordHash.format(of: Self.hashes[3]).get() == .argon2(memoryKiB: 8192))
        let refused = [
            "$2b$15$pgxRUqpoOU6vWceTKbSjKeQFmiRdd2u8CaByU4Jft2CmytirFjeKm",  // cost over 14
            "pbkdf2_sha256$2000001$Q8qzJvYCbWkd$yfFpy5MXMu2vVWdmk/cgRNFPEWnEZ5A7PfqBjDDP0mE=",
            "$argon2id$v=19$m=524288,t=1,p=4$SaOKujm2vQReHXB55+DFUQ$EsOtIwpyde/wpniJQPh5+dkqboHqyz5sptrQGUYhvfc",
            "md5$salt$abcdef", "", "$2b$04$short", String(repeating: "a", count: 600),
        ]
        for hash in refused {
            #expect(throws: ImportedPasswordHash.ImportError.self) { try ImportedPasswordHash.format(of: hash).get() }
            #expect(!ImportedPasswordHash.verify(Self.password, hash: hash))
        }
    }

    @Test func aNULInsideThePasswordNeverMatchesABcryptHash() {
        #expect(!ImportedPasswordHash.verify(Self.password + "\u{0}extra", hash: Self.hashes[0]))
    }
}
