package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDbPointer;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWrapper;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonJavaScript;
import org.bson.BsonJavaScriptWithScope;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonSymbol;
import org.bson.BsonTimestamp;
import org.bson.BsonUndefined;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DocumentCodec;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;

class BsonTreeSizeTest {

    @Test
    void everyBsonTypeItCounts_isTheSizeTheBinaryWriterWrites() {
        List<BsonValue> values = List.of(
                new BsonDouble(-0.0),
                new BsonString("é€ and a \u0000 inside"),
                new BsonDocument("a", new BsonInt32(1)).append("b", new BsonArray(List.of(BsonBoolean.TRUE))),
                new BsonArray(List.of(new BsonInt32(1), new BsonString("x"), new BsonDocument())).clone(),
                new BsonBinary(new byte[7]),
                new BsonBinary((byte) 2, new byte[7]),
                new BsonBinary((byte) 4, new byte[16]),
                new BsonBinary((byte) 0x80, new byte[3]),
                new BsonUndefined(),
                new BsonObjectId(),
                BsonBoolean.FALSE,
                new BsonDateTime(12),
                BsonNull.VALUE,
                new BsonRegularExpression("^a.*é", "mi"),
                new BsonJavaScript("x = 1"),
                new BsonSymbol("s"),
                new BsonInt32(5),
                new BsonTimestamp(1, 2),
                new BsonInt64(6),
                new BsonDecimal128(Decimal128.parse("1.10")),
                new BsonMinKey(),
                new BsonMaxKey());
        for (BsonValue value : values) {
            BsonDocument document = new BsonDocument("_id", new BsonInt32(1)).append("vé", value);

            assertThat(BsonTreeSize.of(document, 10))
                    .as(value.getBsonType().name())
                    .isEqualTo(encodedSize(document));
        }
    }

    @Test
    void whatTheArithmeticIsNotSureOf_isMinusOne() {
        List<BsonDocument> unsure = List.of(
                new BsonDocument("a\u0000b", new BsonInt32(1)),
                new BsonDocument("s", new BsonString("\uD83D\uDE00")),
                new BsonDocument("r", new BsonRegularExpression("a\u0000")),
                new BsonDocument("w", new BsonDocumentWrapper<>(new Document("x", 1), new DocumentCodec())),
                new BsonDocument(
                        "raw", new RawBsonDocument(new BsonDocument("y", new BsonInt32(2)), new BsonDocumentCodec())),
                new BsonDocument("js", new BsonJavaScriptWithScope("x", new BsonDocument())),
                new BsonDocument("p", new BsonDbPointer("db.c", new org.bson.types.ObjectId())));
        for (BsonDocument document : unsure) {
            assertThat(BsonTreeSize.of(document, 10)).as(document.getFirstKey()).isEqualTo(-1);
        }
    }

    @Test
    void nestingPastTheLimit_isMinusOne_andAtTheLimitCounted() {
        BsonDocument three = new BsonDocument("a", new BsonDocument("b", new BsonArray(List.of(new BsonInt32(1)))));

        assertThat(BsonTreeSize.of(three, 3)).isEqualTo(encodedSize(three));
        assertThat(BsonTreeSize.of(three, 2)).isEqualTo(-1);
    }

    private static long encodedSize(BsonDocument document) {
        return new RawBsonDocument(document, new BsonDocumentCodec())
                .getByteBuffer()
                .remaining();
    }
}
