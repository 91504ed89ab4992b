@testable import AuthKernel
import Testing

/// The QR encoder against independent implementations, from PyPI: python-qrcode 8.2 and segno 1.6.6.
/// The vectors were made once (none is generated here):
///
/// - a matrix is python-qrcode's (`QRCode(version=…, error_correction=…, border=0, mask_pattern=…)`
///   with `QRData(text.encode("utf-8"), mode=MODE_8BIT_BYTE)`), row by row, 1 for dark, each row the
///   hex of its modules padded with light ones to a multiple of four; a digest is the first 16 hex
///   digits of SHA-256 over every row's "0"/"1" characters;
/// - the expected mask is the one whose complete symbol (format and version information written)
///   segno's scorer (`segno.encoder.evaluate_mask`) ranks lowest, the lowest-numbered of equals;
/// - for all 160 versions and levels, segno's own matrix with that mask (`segno.make(text, error=…,
///   mode="byte", version=…, mask=…, boost_error=False)`) was checked equal to python-qrcode's, and
///   the capacities are the longest text each library fits in each version.
///
/// Why not segno's matrices everywhere: when the terminator ends on a byte boundary (always, in byte
/// mode, unless the text fills its version) segno adds a zero codeword before the pad codewords
/// 11101100 00010001, which the standard does not (readers ignore either); for a text that fills its
/// version the two libraries and this encoder agree module for module.
///
/// Why the mask is not either library's own choice: the penalty rules are the standard's, but both
/// libraries score a symbol before its format and version information is written (segno with those
/// modules and the dark module light: that reproduces all 160 of its choices here; python-qrcode
/// with them light, and it also leaves out 1:1:3:1:1 patterns whose light margin is the quiet
/// zone), while this encoder scores the symbol as it is printed. Their own choice agrees with it
/// for 140 (segno) and 107 (python-qrcode) of the 160 version tests; any mask reads the same. The
/// expected mask is therefore the lowest of segno's scores of the complete symbols, with one more
/// difference: after counting a 1:1:3:1:1 pattern segno resumes its search past it, so a second
/// pattern overlapping the first (`10111011101`) is not counted, where the standard counts each
/// occurrence. That changes the choice twice (Q, versions 1 and 38: segno's scores prefer mask 4,
/// this encoder's 0 and 5) and one score in ``penaltyMatchesSegno(_:)``.
struct QRCodeTests {
    /// A full matrix to compare module by module.
    struct Vector: Sendable, CustomTestStringConvertible {
        let text: String
        let correction: QRCode.Correction
        let version: Int
        let mask: Int
        let rows: [String]
        var testDescription: String { "\(correction) \(text.utf8.count) bytes: version \(version)" }
    }

    /// Version 1 (two levels), the authenticator app's URI, version 11 with version information,
    /// UTF-8 beyond ASCII at H, and 1000 bytes (version 22) at L: version, mask and every module.
    @Test(arguments: QRCodeTests.matrices) func matrixMatchesReference(_ vector: Vector) throws {
        let code = try QRCode(vector.text, correction: vector.correction)
        #expect(code.version == vector.version)
        #expect(code.size == 17 + 4 * vector.version)
        #expect(code.mask == vector.mask)
        #expect(Self.hexRows(code) == vector.rows)
        // The same with the mask forced: the mask parameter changes nothing when it agrees.
        #expect(try QRCode(vector.text, correction: vector.correction, mask: vector.mask) == code)
    }

    /// Every version at every level: the longest filler both libraries fit in that version is
    /// exactly the encoder's capacity (so one byte more takes the next version), and is encoded in
    /// that version, with the mask the penalty prefers, to the libraries' matrix.
    @Test(arguments: QRCode.Correction.allCases) func everyVersionMatchesReference(_ correction: QRCode.Correction) throws {
        let table = try #require(Self.versions[correction])
        #expect(table.map(\.version) == Array(1...40))
        for entry in table {
            #expect(QRCode.capacity(version: entry.version, correction: correction) == entry.bytes, "version \(entry.version)")
            let code = try QRCode(Self.filler(entry.bytes), correction: correction)
            #expect(code.version == entry.version)
            #expect(code.mask == entry.mask, "version \(entry.version)")
            #expect(Self.digest(code) == entry.digest, "version \(entry.version)")
        }
    }

    /// Each of the eight masks forced, at each level, gives python-qrcode's matrix with that mask:
    /// the mask patterns and the format information of all 32 combinations.
    @Test(arguments: QRCode.Correction.allCases) func everyMaskMatchesReference(_ correction: QRCode.Correction) throws {
        let expected = try #require(Self.masks[correction])
        for mask in 0..<8 {
            let code = try QRCode(Self.otpauth, correction: correction, mask: mask)
            #expect(code.mask == mask)
            #expect(code.version == expected.version)
            #expect(Self.digest(code) == expected.digests[mask], "mask \(mask)")
        }
    }

    /// The penalty of each of those 32 symbols is the score segno's `evaluate_mask` gives it (runs,
    /// 2 × 2 blocks, finder-like patterns with the quiet zone counted as light, dark share), plus 40
    /// for each finder-like pattern overlapping one segno counted (one, in L with mask 4: row 12
    /// reads 10111011101 from column 29), and the encoder picks the mask with the lowest.
    @Test(arguments: QRCode.Correction.allCases) func penaltyMatchesSegno(_ correction: QRCode.Correction) throws {
        let expected = try #require(Self.masks[correction])
        let bytes = Array(Self.otpauth.utf8)
        let data = QRCode.dataCodewords(bytes, version: expected.version, correction: correction)
        let codewords = QRCodeLayout.codewords(data, version: expected.version, correction: correction)
        let penalties = (0..<8).map { QRCodeSymbol.make(version: expected.version, correction: correction, codewords: codewords, mask: $0).penalty() }
        #expect(penalties == (0..<8).map { expected.scores[$0] + 40 * expected.skipped[$0] })
        let lowest = penalties.firstIndex(of: penalties.min()!)!
        #expect(try QRCode(Self.otpauth, correction: correction).mask == lowest)
        if correction == .low {
            let code = try QRCode(Self.otpauth, correction: .low, mask: 4)
            #expect((29..<40).map { code[$0, 12] ? "1" : "0" }.joined() == "10111011101")
            #expect(expected.skipped == [0, 0, 0, 0, 1, 0, 0, 0])
        } else {
            #expect(expected.skipped == [0, 0, 0, 0, 0, 0, 0, 0])
        }
    }

    /// A text longer than version 40 holds throws, with its length and the capacity; exactly the
    /// capacity fits.
    @Test(arguments: QRCode.Correction.allCases) func tooLongThrows(_ correction: QRCode.Correction) throws {
        let capacity = try #require(Self.versions[correction]?.last?.bytes)
        #expect(throws: QRCode.TooLong(bytes: capacity + 1, capacity: capacity)) {
            try QRCode(String(repeating: "a", count: capacity + 1), correction: correction)
        }
        #expect(throws: QRCode.TooLong(bytes: capacity + 2, capacity: capacity)) {
            try QRCode(String(repeating: "a", count: capacity) + "é", correction: correction)  // é is two bytes
        }
        #expect(try QRCode(String(repeating: "a", count: capacity), correction: correction).version == 40)
    }

    /// The SVG: a white square with the 4-module quiet zone, one black path whose runs, drawn
    /// back, are exactly the dark modules; role, label and title escaped; crisp edges.
    @Test func svgDrawsTheModules() throws {
        let code = try QRCode(Self.otpauth)
        let svg = code.svg(title: "Key <for> \"Anna\" & 'Ben'")
        let side = code.size + 8
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" role=\"img\""))
        #expect(svg.contains("aria-label=\"Key &lt;for&gt; &quot;Anna&quot; &amp; &#39;Ben&#39;\""))
        #expect(svg.contains("<title>Key &lt;for&gt; &quot;Anna&quot; &amp; &#39;Ben&#39;</title>"))
        #expect(svg.contains("shape-rendering=\"crispEdges\""))
        #expect(svg.contains("<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/>"))
        #expect(svg.split(separator: "<path").count == 2 && svg.hasSuffix("\"/></svg>"))
        #expect(!svg.contains("<script") && !svg.contains("<for>"))

        // Draw the path back: every run is "M x y h n v1 h-n z" in symbol units.
        let path = try #require(svg.split(separator: " d=\"").last?.split(separator: "\"").first)
        var drawn = Set<[Int]>()
        for run in path.split(separator: "z") {
            let numbers = run.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            try #require(numbers.count == 5 && numbers[3] == 1 && numbers[2] == numbers[4], "\(run)")
            #expect(numbers[0] >= 4 && numbers[1] >= 4 && numbers[0] + numbers[2] <= code.size + 4 && numbers[1] < code.size + 4)
            for x in numbers[0]..<numbers[0] + numbers[2] { #expect(drawn.insert([x - 4, numbers[1] - 4]).inserted) }
        }
        var dark = Set<[Int]>()
        for y in 0..<code.size { for x in 0..<code.size where code[x, y] { dark.insert([x, y]) } }
        #expect(drawn == dark)
        // Runs are merged: no two runs of a row touch.
        #expect(path.split(separator: "z").count < dark.count / 2)
        // Outside the symbol is the quiet zone.
        #expect(!code[-1, 0] && !code[0, code.size] && code[0, 0])
    }

    /// The example in `QRCode`'s doc comment: the smallest version at M, its SVG named.
    @Test func docCommentExample() throws {
        let code = try QRCode("otpauth://totp/authd:anna%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=authd")
        let markup = code.svg(title: "QR code of the key for your authenticator app")
        #expect(code.version == 5 && code.correction == .medium && code.size == 37)
        #expect(markup.contains("<title>QR code of the key for your authenticator app</title>"))
    }

    /// The rows of a matrix as the vectors hold them.
    static func hexRows(_ code: QRCode) -> [String] {
        (0..<code.size).map { y in
            var bits = (0..<code.size).map { code[$0, y] }
            while bits.count % 4 != 0 { bits.append(false) }
            return stride(from: 0, to: bits.count, by: 4).map { i in
                String((0..<4).reduce(0) { $0 << 1 | (bits[i + $1] ? 1 : 0) }, radix: 16)
            }.joined()
        }
    }

    /// The first 16 hex digits of SHA-256 over the rows' "0"/"1" characters.
    static func digest(_ code: QRCode) -> String {
        var text = ""
        text.reserveCapacity(code.size * code.size)
        for y in 0..<code.size { for x in 0..<code.size { text.append(code[x, y] ? "1" : "0") } }
        return SHA256.hash(Array(text.utf8)).prefix(8).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// The vectors' filler text: this line repeated and cut to `count` bytes (ASCII).
    static func filler(_ count: Int) -> String {
        let line = "authd QR vector 0123456789 abcdefghijklmnopqrstuvwxyz ~!@#$%^&*() ABCDEFGHIJKLMNOPQRSTUVWXYZ. "
        return String(String(repeating: line, count: count / line.count + 1).prefix(count))
    }

    /// An enrolment's URI as the TOTP provider writes it.
    static let otpauth = "otpauth://totp/authd:anna%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=authd&algorithm=SHA1&digits=6&period=30"

    /// python-qrcode's matrices, module by module.
    static let matrices: [Vector] = [
        Vector(text: "authd", correction: .medium, version: 1, mask: 0, rows: [
            "fe53f8", "828208", "ba02e8", "ba6ae8", "bacae8", "826a08", "feabf8", "005800", "aa7090",
            "b4c208", "6ea8f8", "d9a200", "7f2ac8", "009518", "fe5738", "827d80", "baf718", "ba4370",
            "ba88a8", "826310", "feab98",
        ]),
        Vector(text: "HELLO WORLD", correction: .low, version: 1, mask: 4, rows: [
            "fefbf8", "82aa08", "ba82e8", "baf2e8", "ba0ae8", "82d208", "feabf8", "007800", "ce5178",
            "2cf878", "ca7690", "a84400", "928b30", "00cf58", "fe6ad0", "82bd98", "bab630", "ba08d8",
            "ba51c0", "82b400", "febfa8",
        ]),
        Vector(text: "otpauth://totp/authd:anna%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=authd&algorithm=SHA1&digits=6&period=30", correction: .medium, version: 8, mask: 4, rows: [
            "fead15f298bf8", "82592727cba08", "ba68720df9ae8", "ba813709252e8", "ba9abbf6482e8",
            "82fc6e3862208", "feaaaaaaaabf8", "00d4a62db2000", "8bbd27f59dfc8", "c0cdadae52710",
            "0abc4538b0e70", "e4db1384b81a0", "df473a809dad0", "5c1747a7176d0", "ff4ecd4eceec0",
            "9433191a10de8", "9331e198300b0", "71de692d67650", "92ebf705eee70", "c1d96be2bc5a0",
            "7fc67bc0decf0", "81ea89964a6f8", "efc427e702f80", "a8dfc63c688a8", "8aea92b28dae8",
            "b89c8e2fdb8a0", "9f888ff07cfe0", "f122bf07beb28", "d7a0eaa7aa050", "5479f937caec0",
            "ba97d1cb53940", "699686ed60738", "ef193127ce970", "3dc76a929ea90", "52fe1e58314f0",
            "d98eb152aeb28", "af4c2b5098728", "909348e7dae90", "474ac057c7910", "7047cf9f20b28",
            "e25977f2d8fa0", "00cbfa27d2880", "fef912b8e4ae0", "8267d630e98e8", "bac0ffe2dbfa8",
            "ba09a077caa10", "ba15ec5ec6b60", "820e3b1a16130", "fe9ad43835db8",
        ]),
        Vector(text: "https://auth.example.com/account?tab=authenticator&lang=en-GB#xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", correction: .quartile, version: 11, mask: 1, rows: [
            "fe1bf665bbbadbf8", "825556a56eee1a08", "ba0ca95c0401fae8", "bafc27b43133eae8",
            "ba18768f9b9b32e8", "82c432688e8fe208", "feaaaaaaaaaaabf8", "00d3d5e89a79a800",
            "6272b47f8ecae340", "546e7722a5c45438", "1a6bfff650d50168", "bcbaf5de379bbbc0",
            "af3b62637caef690", "5476757957445438", "1377d9e5bfd10168", "f82ba7d21ecba2c0",
            "cf3c3a6f6aaee690", "3477b1e5055445b8", "d77173e191c101e8", "59ab8cd41d2ba2c8",
            "ef3e5d6b4beee780", "9474306525441508", "87f11a81b1897848", "c9e98c1419aaadc8",
            "ef646ccb6cfec6c0", "e55c6964a0441408", "a753530155105890", "c5b19cad1bb08fc0",
            "ffea15cfeefa8fd8", "b8a20008a45158d8", "0ab559bad11acae8", "88a59f689bbc88c0",
            "6fab95cfeeeadfd0", "1491049424458738", "7a9bd97cd11043e8", "68839858ab9d3ac0",
            "8a4e91750eaffe10", "b081859fc4014538", "7ee259ad313183e8", "4c9a9b3a0a5fbec0",
            "8a4edf346eacfc10", "b0c9439745444138", "7eba7f91c0150be8", "4962255b409bbec0",
            "826ed148c2cefc10", "bdb00dc1c9044938", "b23b539962111be8", "0c68474958fbbec0",
            "eaed72cbaedef410", "08b09b47041c4128", "3ebc390af54913e8", "e96b8cd9bc3bfed0",
            "f2680edfee6edf88", "00b6f6c884dc68a8", "fe3990dad4017af8", "824aec48b9aae8d0",
            "ba12668fc8ee9f88", "ba74a668e4449ae0", "ba81c9cf3108ce98", "82b895a53ba7e540",
            "fe4646d44ee49148",
        ]),
        Vector(text: "Grüße aus Köln — 日本語のテキスト 🙂", correction: .high, version: 6, mask: 4, rows: [
            "fe53263bbf8", "8291799a208", "ba6bd4df2e8", "ba6153acae8", "ba7102b9ae8", "82955eb2a08",
            "feaaaaaabf8", "00df98f7800", "0f7023b5b10", "6c0ac2a8320", "f359cf821f0", "e48d546a0c0",
            "2bda61ffa80", "208afe43410", "ff1df251790", "e96d4379950", "b601742eac8", "5c0321d6508",
            "d2bedf2b728", "f5e6a6e9ef0", "eb4d41c1bd0", "a82649b2440", "775a828f708", "d86399d6100",
            "f7fcffd5a40", "3cd33648860", "cb0ff35ec30", "0018dadab60", "22277c65a60", "dc0319af908",
            "324c03ae130", "19733b03118", "f39c4eb5fc8", "00fe1d438f8", "fefbb524af0", "8289738e8a0",
            "baf7852afe0", "ba3f9b40578", "ba550308598", "821a5166af8", "fe45b907890",
        ]),
        Vector(text: filler(1000), correction: .low, version: 22, mask: 4, rows: [
            "fee2fce2bc82d3886858b2ba3f8", "82ba292a57bc264be4ef9266208", "ba9b8a2f52f44c42922f44f32e8",
            "bad04a1157544cec3fc08044ae8", "ba43c2ff0833ffc221fc4d19ae8", "82c35c8b42b48e1b648f46ed208",
            "feaaaaaaaaaaaaaaaaaaaaaabf8", "0035f98b14a68906c08a63b5800", "ce6d29fc021efabee5fb4a80978",
            "eca43cb2f63bb3df6dce8d98ca8", "7e880a51a90e403d9349b5435b0", "f46bb7fe62f43940b30d42f5d88",
            "8f07f823d2b8fe0f7a5acda9e48", "40bee6c3cd21d51d1fe586bc8b8", "aafd0b94b89ecca41258f45aab0",
            "4cc3a32e26812a04b7c807b0980", "77938981597d25d63912fe74d88", "c93f79df4d2fe4bc3c83090afe0",
            "f3967bc03d4b48b08a40bd8e190", "55cc911d42f5eb62c16a40f5890", "0edde8c5837a4739282b12ef950",
            "a459b1f13df5a61c73b3824acb0", "ce657354245391b89f51680a190", "a99cfd2f45b03832912f56a7598",
            "ff9711facb44fd632afb31b3fc8", "58b42b8b9b618ae46a89cf188a0", "9acf22acb50ba8bd1aa82d0aa80",
            "38e6518b02f78c01958b62c58c0", "0fb64ff80624ffeb0ef99f75fd8", "8defa2230acbe6a0bba1db2dd10",
            "aa456149addb516c466db41e250", "51d66e9e42e24354b4574091280", "0b9e2c919698b3ea24950def710",
            "8d7eaa10999ffd8f3664b79d480", "9b2893c4fd0a5cbd0ba8a48a970", "3da20ed707c1d272a6c900e50c0",
            "bb3fd243dcb03282da76dc28b88", "d867d76b7f36d7560d3cbcf6b70", "4755f661b80219b54a88698e410",
            "ed8bd18152f49402f3df42e5b88", "a64ef5d7a73a12835030eeb4e38", "f0f83d214e76a9a565122f5d070",
            "221630dcbd4328fc9b08b812f30", "f9943ad315b6c916c1c276b5590", "f378c0c54708f3af76533a10ae8",
            "e9a968f686f937bb2a60003cce8", "86b2ebd0ac0be82d8f59b5439d0", "a07bb24664f5d940e45542f5e90",
            "6fb968fb4220f9767effd4b8f88", "88cd0a8da8708b29488bdaba8f8", "9aba99ad389face512a9fc5bad0",
            "b8eff38f26808a45b78817b1898", "1f9cf9f88822fa46a5ffe3ebf98", "6cd4a3d16938b3fee471564be60",
            "920d60182d0a18b48a513d8eb70", "58b9dc3d0695eb66c17740f5b80", "e37006a20a7abcae3832831f550",
            "00ca9192e98b005a1777e42eb70", "d6bd5228a44615ac9f31681a990", "f8c15c3e45b4ee20915f56b3108",
            "fe354eeb5655ac9a3aa2a0a5748", "d8f2bc56490446a00e35ab41ba0", "afe25564b50a58fd4b18ad0e360",
            "38fa167306f64d41f5ba62c4040", "1ae71e391e75b7d419789e74a58", "41d105274d2f133efcd32f63e10",
            "42744041adca016c424db11f698", "89b3751e02e28754f62f4290b18", "e3e413fa03152e69b22a947fb18",
            "b9ee1c53dfd9e2487052e37ba20", "725ef048fd1214bd0b20bc9a350", "94ec3cab07d43276a69910e4018",
            "7fcfe0fbacacfbc362f9a9bdfd8", "08b4f28e9bf189421a8abd118f0", "aa8d81a9a803a9b54fa86996af0",
            "88ef388942b58c02f48f42f5890", "5f97dbfe3627fb9ac9f9f769fb8", "2986e2e4b208bde102be773f710",
            "87de75ece44b48fc9ae92912dd0", "a110917b45a61016c08337b0708", "b71a62dcde1143360c02cc88ee8",
            "bde97030c284e86d2ab486fab48", "5e64eba9ad0b2c3d8e89f54a530", "75cb03cf65f1bf40f55542e4480",
            "22fabb765cb1209b9e364528ac8", "ac895a7a6e14ff5e34a63cf7878", "f3a334ad389f2ca403c9e85b110",
            "b03630873681de64b7f803b0788", "d2fb0199dfb203bb35366a9a918", "e86b163d067c379c802eaa29560",
            "8a5358f83d1a08b50b393d8e4b0", "6df9f99d56953b63c41740f4b18", "c69a8c4b45e877b6356bda00a48",
            "e11d70ae8ec8202f50698079f70", "e24ff339a4434de89ea9680a850", "2d6e139345b1c64291af56b2290",
            "1b8698fbc3cdfd8da7ffb978f88", "00e68b89ae438887b88bed288b0", "fe46a5acb40ba8fd0ba8bd12aa0",
            "82e5e58b02b78d01a58a62d38c8", "ba8514f8cf6bf9a4b0f98fecfd8", "ba66f2814969e2baa0ef680f498",
            "ba129fd1ad9bc07c07cdb01e7e0", "8286b97e02923f54f50f4290500", "fefbd0cd1a46b766aa53c5a6f88",
        ]),
    ]

    /// python-qrcode's matrix of `otpauth` with each mask forced, by level; segno's score of each,
    /// and the overlapping finder-like patterns segno's search steps over.
    static let masks: [QRCode.Correction: (version: Int, digests: [String], scores: [Int], skipped: [Int])] = [
        .low: (6, ["77773424ca48e972", "4d0113604e68119c", "3dbcace46ecc7119", "5deddc52b213e395", "c1a2e7db130791d1", "9acb9f792fc3c4fd", "924399a06980068b", "6b40993c9615de1b"],
            [1998, 1983, 1882, 2005, 2209, 1955, 1979, 1978], [0, 0, 0, 0, 1, 0, 0, 0]),
        .medium: (8, ["71f6ebee088b6eb3", "019957d08561b5e7", "e77f215239ef00e1", "f6aaf084f48dead4", "30b5a16f23c0873e", "ae5169c95160792b", "795fe0e0651a60fd", "b92199bf342c6002"],
            [2508, 2386, 2375, 2397, 2313, 2457, 2505, 2397], [0, 0, 0, 0, 0, 0, 0, 0]),
        .quartile: (9, ["37db860e89006cfd", "0a82c73fb3bbed04", "739342ba799d8d90", "5ab096e86a16c72b", "44ff5e6c6a316c3f", "31f05515c3bfb2b9", "19cebde5f1ecfa94", "1cf7af17a443bd81"],
            [2732, 2671, 2709, 2900, 2796, 2743, 2746, 2785], [0, 0, 0, 0, 0, 0, 0, 0]),
        .high: (11, ["f657e5fe631a9763", "0b9753d7f24f1553", "5d2fb029c9fa1165", "489798160994bd1c", "a1eff8e77f5652e5", "4f81f1035748697d", "87e332c51acb0f77", "256907b0ab98a1d1"],
            [3489, 3360, 3348, 3616, 3581, 3269, 3304, 3458], [0, 0, 0, 0, 0, 0, 0, 0]),
    ]

    /// (version, longest filler it holds, mask, digest of python-qrcode's matrix) by level.
    static let versions: [QRCode.Correction: [(version: Int, bytes: Int, mask: Int, digest: String)]] = [
        .low: [
            (1, 17, 2, "9f04bf0edbff46e2"), (2, 32, 2, "a51bb8cbb0dc19e2"), (3, 53, 2, "e094e575def69f1e"), (4, 78, 2, "efa6069c401d4d18"),
            (5, 106, 3, "3d57e521e4d4907b"), (6, 134, 7, "9e991ce86d6e3e5a"), (7, 154, 4, "f3c9f978322f4081"), (8, 192, 7, "72affa410fa680e8"),
            (9, 230, 3, "17860af85dc8f47a"), (10, 271, 4, "c140c55357ecaab2"), (11, 321, 6, "1a376a146cd3d44c"), (12, 367, 7, "2ebc91c2cb211207"),
            (13, 425, 6, "49d7e0aff67a7a7d"), (14, 458, 3, "a41d48248cc46b8a"), (15, 520, 4, "07248dd578ec7f73"), (16, 586, 3, "50cd8ca45774c1a4"),
            (17, 644, 3, "d780fb3886859f4b"), (18, 718, 7, "414d76953b50388b"), (19, 792, 4, "6cbf8163d79fcaac"), (20, 858, 3, "83e47b4cb65e525e"),
            (21, 929, 4, "90c535dc6d473dd9"), (22, 1003, 4, "9c4e37e95fdbe407"), (23, 1091, 4, "c215046784d126e5"), (24, 1171, 4, "e6d33b947b548d65"),
            (25, 1273, 4, "3a55eb3cf22ee5ca"), (26, 1367, 4, "1b855cc14b0f3740"), (27, 1465, 4, "ebbb3d248ff599a7"), (28, 1528, 6, "2ec2dacfbe355fea"),
            (29, 1628, 4, "a6eab2aa8f2a506a"), (30, 1732, 7, "98b8ea1340d2ef46"), (31, 1840, 3, "bc2d499a953b154a"), (32, 1952, 4, "456a9f264b0404c5"),
            (33, 2068, 4, "8096555975235238"), (34, 2188, 3, "3f1266e13f363c33"), (35, 2303, 3, "3a868a32210f4d2e"), (36, 2431, 1, "87256b726ecdc9c8"),
            (37, 2563, 1, "4d5224e639fa86d8"), (38, 2699, 1, "5b68f1d6addb96f4"), (39, 2809, 4, "eadefd10857ed625"), (40, 2953, 5, "0e9787a032f34c28"),
        ],
        .medium: [
            (1, 14, 2, "38dba245ab861f14"), (2, 26, 4, "edb51f6584b7d34d"), (3, 42, 2, "df7e1d9923ed34a6"), (4, 62, 2, "a2cb8712d2b17142"),
            (5, 84, 0, "c98c052f7390e95e"), (6, 106, 3, "ae21ea9c27580084"), (7, 122, 6, "147954ea4f525bf0"), (8, 152, 0, "1a8a66707e6f8f0d"),
            (9, 180, 2, "9bb9b02045419ce2"), (10, 213, 1, "f23488ff726da4ef"), (11, 251, 3, "b53a537a86237788"), (12, 287, 7, "af58fd694d6c05a5"),
            (13, 331, 4, "98932d4304b17763"), (14, 362, 1, "0411fa9d2b1d41b2"), (15, 412, 4, "4ee30f9b3f3f7ed2"), (16, 450, 2, "b3d075d8e691ea1f"),
            (17, 504, 3, "b3dd2a3f9822e2cc"), (18, 560, 1, "69bb57867424c52a"), (19, 624, 2, "d8617dd7e3ad3142"), (20, 666, 1, "47b3278f00565471"),
            (21, 711, 4, "add6d6c931c8cfa8"), (22, 779, 4, "92a8299520224945"), (23, 857, 4, "fdb74644fdf0b86a"), (24, 911, 4, "ef6ee98d1e8f7fbb"),
            (25, 997, 4, "1ff7cf580af1cbc9"), (26, 1059, 4, "bff71c6aa97a6e5c"), (27, 1125, 4, "7d6c6b76a58df9fc"), (28, 1190, 4, "8fbcfbef61a7c221"),
            (29, 1264, 4, "9eb5ad749ea8def2"), (30, 1370, 0, "eeb922f594592c25"), (31, 1452, 0, "b7e1031ae2b7df67"), (32, 1538, 4, "ca8ecc6995791172"),
            (33, 1628, 2, "23daccf6c2ba5018"), (34, 1722, 2, "df8e89a1e49197c4"), (35, 1809, 4, "3943230666e5c666"), (36, 1911, 4, "e485a888a849ad95"),
            (37, 1989, 1, "00ff1dcddb191d93"), (38, 2099, 2, "81c299908ab7e93d"), (39, 2213, 1, "0865a8ba7132d1af"), (40, 2331, 4, "58f59e9615d42cd6"),
        ],
        .quartile: [
            (1, 11, 0, "b010e76f35ea8f23"), (2, 20, 3, "77ffe2dff918317c"), (3, 32, 3, "f34b948c22a9c780"), (4, 46, 3, "090283d491f68b4a"),
            (5, 60, 4, "2390cead28834736"), (6, 74, 2, "11ee424a5050ad3f"), (7, 86, 3, "f32d62759d384497"), (8, 108, 7, "4981cd0fb905daf0"),
            (9, 130, 4, "e673fbf47dcab14f"), (10, 151, 7, "cd2b812defd95f84"), (11, 177, 1, "688450d75379a993"), (12, 203, 3, "1afe7c9dfb7eec70"),
            (13, 241, 2, "e33e134c1d9afc54"), (14, 258, 7, "b635e935ad5af8ec"), (15, 292, 1, "0cfc324d474b8e51"), (16, 322, 4, "c133ac7d4cc64f27"),
            (17, 364, 3, "3d16c75dfde380b9"), (18, 394, 6, "b514e77fae746e8e"), (19, 442, 3, "59d236de1e7b5af8"), (20, 482, 7, "636ed6ab396e1e11"),
            (21, 509, 4, "fd9b7e7095a216b2"), (22, 565, 5, "806fcbe20f7b6e7f"), (23, 611, 4, "de286a241ba10bdf"), (24, 661, 4, "f44484c27f54e531"),
            (25, 715, 4, "0815ffbac6cbce4b"), (26, 751, 7, "b659d0bf9cccac42"), (27, 805, 4, "9e5daa3aa11b1ea7"), (28, 868, 5, "ba92ba62bb91f9d5"),
            (29, 908, 5, "8ef63174d2909848"), (30, 982, 3, "e7164f37637e1610"), (31, 1030, 3, "6f9f45479b7bc785"), (32, 1112, 3, "80ea5a260f25655b"),
            (33, 1168, 4, "696752357fe768c1"), (34, 1228, 3, "ed09160261ea8818"), (35, 1283, 4, "8884ae0e0bde241c"), (36, 1351, 3, "4418f562a7c9e958"),
            (37, 1423, 4, "5f9906b2cfd52c04"), (38, 1499, 5, "bc430ae742b8958b"), (39, 1579, 1, "b7f377fffc85d03a"), (40, 1663, 1, "5cf7dc64d2d225c0"),
        ],
        .high: [
            (1, 7, 6, "cc3694b0f1ac6f6b"), (2, 14, 3, "2b8b1b6c00d380e2"), (3, 24, 6, "0eb2559c0f54212e"), (4, 34, 2, "5394c15aaa1b8d4d"),
            (5, 44, 7, "5929ef5beadba928"), (6, 58, 2, "2c17e05a272c7df5"), (7, 64, 2, "452f325f52e5416d"), (8, 84, 3, "c7e8565ccb161722"),
            (9, 98, 3, "ee4cbe164edf9dc5"), (10, 119, 4, "31d2ebd4c54d507f"), (11, 137, 5, "d7bb50b1033ad715"), (12, 155, 6, "72a4f784e77fa30d"),
            (13, 177, 2, "668634e8989c346f"), (14, 194, 6, "41becce665288125"), (15, 220, 7, "7809fd5bf4901c10"), (16, 250, 7, "f8878aaeff28c8fe"),
            (17, 280, 4, "62b9ba7cf7beebe2"), (18, 310, 7, "457581d86895dfd6"), (19, 338, 2, "9dafa3fd76c96697"), (20, 382, 7, "98e3df1e5dbf3cbd"),
            (21, 403, 4, "877684b7e878e0d2"), (22, 439, 4, "557cf019c45e06a1"), (23, 461, 4, "9fb8678e655efdf9"), (24, 511, 4, "5afa796b95b2492c"),
            (25, 535, 4, "adcdf67c2d13caa8"), (26, 593, 6, "d0b442b48489a0b1"), (27, 625, 4, "9a15862fdcd83f8e"), (28, 658, 3, "5a8919c1ca5cd85d"),
            (29, 698, 6, "54f8be2d7dad9c3c"), (30, 742, 7, "311dafa3f680ef96"), (31, 790, 3, "c564dadf01fac345"), (32, 842, 6, "a8fd2e9c8ad3b25a"),
            (33, 898, 4, "c1a0d7f6587a97be"), (34, 958, 1, "aa6c973b9e2e8f16"), (35, 983, 4, "60d2d918f2cd28b6"), (36, 1051, 6, "ae96b093370d265c"),
            (37, 1093, 5, "8ef2d3d5514f3963"), (38, 1139, 5, "a3cebb544507c713"), (39, 1219, 3, "53ab3c107fdac46f"), (40, 1273, 6, "b71b3b8f25e2a588"),
        ],
    ]
}
