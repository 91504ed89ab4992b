import AuthKernel
import PasswordProvider
import Foundation
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
        #expect(try ImportedPasswordHash.format(of: Self.hashes[3]).get() == .argon2(memoryKiB: 8192, iterations: 1, parallelism: 4))
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

    /// Finding 3 of the second review: memory was bounded, time was not, so `t=4294967295` held a
    /// hashing thread for hours at one unauthenticated sign-in.
    @Test func argon2PassesAndLanesAreBoundedLikeItsMemory() throws {
        let argon2 = "$argon2id$v=19$m=8192,t=1,p=4$SaOKujm2vQReHXB55+DFUQ$EsOtIwpyde/wpniJQPh5+dkqboHqyz5sptrQGUYhvfc"
        let at = { (parameters: String) in argon2.replacingOccurrences(of: "m=8192,t=1,p=4", with: parameters) }
        #expect(try ImportedPasswordHash.format(of: at("m=8192,t=10,p=8")).get() == .argon2(memoryKiB: 8192, iterations: 10, parallelism: 8))
        let refused = [
            ("m=8192,t=4294967295,p=4", "t=4294967295 is over 10"), ("m=8192,t=11,p=1", "t=11 is over 10"), ("m=8192,t=1,p=9", "p=9 is over 8"),
            ("m=8192,t=1,p=4294967295", "p=4294967295 is over 8"), ("m=8192,p=4", "without its m, t and p"), ("m=8192,t=1", "without its m, t and p"),
            ("m=8192,t=99999999999999999999,p=1", "malformed"), ("m=8192,t=-1,p=1", "malformed"), ("m=8192,t=0,p=1", "malformed"),
            ("m=8192,t=1,t=2,p=1", "malformed"),
        ]
        for (parameters, reason) in refused {
            let hash = at(parameters)
            #expect(throws: ImportedPasswordHash.ImportError.self, "\(parameters)") { try ImportedPasswordHash.format(of: hash).get() }
            if case .failure(let why) = ImportedPasswordHash.format(of: hash) { #expect(why.description.contains(reason), "\(why)") }
            #expect(!ImportedPasswordHash.verify(Self.password, hash: "argon2$" + hash.dropFirst()))
        }
    }

    /// A real hash with one pass too many is refused at the check too, without computing it: a hash
    /// stored some other way than `import-users` (an edited backup) holds no thread either.
    @Test func aStoredArgon2HashOverTheBoundsIsNotVerified() throws {
        let tenPasses = try Argon2id(opsLimit: 10, memLimit: 8 << 20).hash(Self.password)
        let elevenPasses = try Argon2id(opsLimit: 11, memLimit: 8 << 20).hash(Self.password)
        #expect(tenPasses.contains("t=10,") && elevenPasses.contains("t=11,"))
        #expect(ImportedPasswordHash.verify(Self.password, hash: tenPasses))
        #expect(!ImportedPasswordHash.verify(Self.password, hash: elevenPasses))
        #expect(Argon2id.verify(Self.password, hash: elevenPasses), "the hash itself is right: only the bound refuses it")
    }

    @Test func aNULInsideThePasswordNeverMatchesABcryptHash() {
        #expect(!ImportedPasswordHash.verify(Self.password + "\u{0}extra", hash: Self.hashes[0]))
    }
}
