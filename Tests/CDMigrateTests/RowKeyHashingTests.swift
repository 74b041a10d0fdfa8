import XCTest

@testable import CDMigrate

/// Row keys (a table and a primary key) hash by a seeded mix of the key, not SipHash: equal keys
/// must hash alike, and the keys a store hands out (consecutive, in a few tables) must spread.
final class RowKeyHashingTests: XCTestCase {
    typealias RowKey = PersistentStore.RowKey

    func testEqualKeysHashAlikeForEverySeed() {
        for seed in [0, 1, -1, 42, Int.max, Int.min] {
            let a = RowKey(table: "ZNOTA", primaryKey: 7)
            let b = RowKey(table: String("ZNO") + "TA", primaryKey: 7)
            XCTAssertEqual(a, b)
            XCTAssertEqual(a._rawHashValue(seed: seed), b._rawHashValue(seed: seed))
        }
    }

    func testTheSeedChangesTheHash() {
        let key = RowKey(table: "ZNOTA", primaryKey: 12_345)
        XCTAssertNotEqual(key._rawHashValue(seed: 1), key._rawHashValue(seed: 2))
    }

    func testConsecutiveKeysFillTheBucketsOfATable() {
        // 4,096 consecutive keys in 8,192 buckets (a dictionary's load): the low bits a
        // dictionary buckets by take most values, as a good hash's would (about 3,200 of 4,096).
        let buckets = 8_192
        var used = Set<Int>()
        for pk in Int64(1)...4_096 {
            used.insert(RowKey(table: "ZNOTA", primaryKey: pk)._rawHashValue(seed: 99) & (buckets - 1))
        }
        XCTAssertGreaterThan(used.count, 3_000)
    }

    func testADictionaryOfRowKeysFindsEveryKeyOfEveryTable() {
        var index: [RowKey: Int] = [:]
        let tables = ["ZNOTA", "ZCATEGORIA", "Z_1CATEGORIAS"]
        for (t, table) in tables.enumerated() {
            for pk in Int64(1)...20_000 { index[RowKey(table: table, primaryKey: pk)] = t * 100_000 + Int(pk) }
        }
        XCTAssertEqual(index.count, 60_000)
        for (t, table) in tables.enumerated() {
            for pk in stride(from: Int64(1), through: 20_000, by: 7) {
                XCTAssertEqual(index[RowKey(table: table, primaryKey: pk)], t * 100_000 + Int(pk))
            }
        }
        XCTAssertNil(index[RowKey(table: "ZNOTA", primaryKey: 20_001)])
        XCTAssertNil(index[RowKey(table: "ZOTRA", primaryKey: 1)])
    }
}
