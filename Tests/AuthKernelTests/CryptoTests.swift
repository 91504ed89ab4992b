@testable import AuthStorage
@testable import AuthKernel
import Foundation
import NIOPosix
import Testing

struct CryptoTests {
    static func hex(_ s: String) -> [UInt8] { Hex.decode(s)! }

    @Test func sha256KnownAnswers() {
        #expect(Hex.encode(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.encode(SHA256.hash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func hmacSHA256KnownAnswer() {
        // RFC 4231, test case 2.
        let mac = SHA256.hmac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test(arguments: [
        // RFC 8032 §7.1, tests 1 and 2: seed, public key, message, signature.
        (
            "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ),
        (
            "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        ),
    ])
    func ed25519KnownAnswers(seed: String, publicKey: String, message: String, signature: String) throws {
        let pair = try Ed25519KeyPair(seed: Self.hex(seed))
        #expect(Hex.encode(pair.publicKey) == publicKey)
        let sig = pair.sign(Self.hex(message))
        #expect(Hex.encode(sig) == signature)
        #expect(Ed25519.verify(signature: sig, message: Self.hex(message), publicKey: pair.publicKey))
    }

    @Test func ed25519RejectsTamperingAndBadSizes() throws {
        let pair = Ed25519KeyPair()
        let message = Array("hello".utf8)
        var sig = pair.sign(message)
        #expect(Ed25519.verify(signature: sig, message: message, publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature: sig, message: Array("hellO".utf8), publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature: sig, message: message, publicKey: Ed25519KeyPair().publicKey))
        sig[10] ^= 1
        #expect(!Ed25519.verify(signature: sig, message: message, publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature: Array(sig.prefix(63)), message: message, publicKey: pair.publicKey))
        #expect(throws: CryptoError.invalidKey) { try Ed25519KeyPair(seed: [1, 2, 3]) }
    }

    @Test func randomBytesAndUniform() {
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        #expect(a.count == 32 && b.count == 32 && a != b)
        #expect(SecureRandom.bytes(0).isEmpty)
        var seen = Set<UInt32>()
        for _ in 0..<2000 {
            let v = SecureRandom.uniform(10)
            #expect(v < 10)
            seen.insert(v)
        }
        #expect(seen.count == 10)
        let code = SecureRandom.digits(6)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
    }

    @Test func randomUUIDsAreVersion4AndDistinct() {
        var seen = Set<UUID>()
        for _ in 0..<1000 {
            let id = SecureRandom.uuid()
            let s = id.uuidString
            #expect(Array(s)[14] == "4")  // version
            #expect("89AB".contains(Array(s)[19]))  // RFC 4122 variant
            #expect(UUID(uuidString: s) == id)
            seen.insert(id)
        }
        #expect(seen.count == 1000)
        // The parser refuses what UUID(uuidString:) refuses.
        let good = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        for bad in ["", String(good.dropLast()), good + "0", good.replacingOccurrences(of: "-", with: "_"), "E621E1F8C36C-495A-93FC-0C247A3E6E5F0",
                    "G621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5 ", "E621E1F8-C36C-495A-93FC-0C247A3E6É"] {
            #expect(UUID(text: bad) == nil)
            #expect(UUID(uuidString: bad) == nil)
        }
        #expect(UUID(text: good) == UUID(uuidString: good))
        for id in seen.prefix(100) + [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))] {
            #expect(id.uppercased == id.uuidString)
            #expect(id.lowercased == id.uuidString.lowercased())
            #expect(UUID(text: id.uppercased) == id && UUID(text: id.lowercased) == id)
        }
        // Not fixed bits elsewhere: every hex digit position varies over 1000 ids.
        #expect(Set(seen.map { Array($0.uuidString)[0] }).count > 8)
    }

    @Test func constantTimeEquals() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([], []))
    }

    @Test func argon2idHashVerifyAndRehash() async throws {
        let weak = Argon2id(opsLimit: 1, memLimit: 8 * 1024 * 1024)
        let hash = try weak.hash("correct horse")
        #expect(hash.hasPrefix("$argon2id$v=19$m=8192,t=1,p=1$"))
        #expect(Argon2id.verify("correct horse", hash: hash))
        #expect(!Argon2id.verify("correct hors", hash: hash))
        #expect(!Argon2id.verify("correct horse", hash: "not a hash"))
        // Per-item random salt: the same password hashes differently.
        #expect(try weak.hash("correct horse") != hash)
        #expect(try weak.needsRehash(hash) == false)
        #expect(try Argon2id.owaspMinimum.needsRehash(hash) == true)
        #expect(throws: CryptoError.invalidHash) { try weak.needsRehash("$2b$10$bcrypt") }
        // The async variants run on the thread pool and agree.
        let pooled = try await weak.hash("", on: .singleton)
        #expect(try await Argon2id.verify("", hash: pooled, on: .singleton))
    }

    @Test func base64URL() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.decode("-_8=") == nil)
        #expect(Base64URL.decode("+/8") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("") == [])
        for n in 0..<40 {
            let bytes = SecureRandom.bytes(n)
            let encoded = Base64URL.encode(bytes)
            #expect(Base64URL.decode(encoded) == bytes)
            // The same as Foundation's base64, with the URL alphabet and no padding.
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
        }
        #expect(Base64URL.decode("-_9") == nil)  // non-zero trailing bits: not a canonical encoding
    }
}

struct TimestampAndBearerTests {
    @Test(arguments: [0.0, 951_782_400, 1_767_225_600, 1_800_000_000.9, 4_102_444_799, 68_169_600])
    func timestampsMatchFoundation(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let foundation = date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon).timeZone(separator: .omitted))
        #expect(Timestamp.string(date) == foundation)
    }

    /// The digit-by-digit formatter against Foundation's over centuries, leap days, day boundaries and
    /// the edges where it hands over to Foundation.
    @Test func timestampsMatchFoundationAcrossTheRange() {
        var samples: [Double] = [-1, -0.5, -86_400, -86_401, 951_868_799, 951_868_800, -2_203_891_200, 4_107_542_400, 253_402_300_799, 253_402_300_800, -12_212_553_600, -12_212_553_601, -62_135_596_800]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3000 { samples.append(Double(Int64.random(in: -62_135_596_800..<253_402_300_800, using: &generator)) + Double.random(in: 0..<1)) }
        for _ in 0..<2000 { samples.append(Double(Int64.random(in: 0..<4_102_444_800, using: &generator))) }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(Timestamp.string(date) == Timestamp.foundation(date), "\(seconds)")
        }
    }
}
