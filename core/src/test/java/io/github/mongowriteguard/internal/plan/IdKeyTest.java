package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import org.bson.BsonArray;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonSymbol;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

class IdKeyTest {

    @Test
    void numericallyEqualIds_ofEveryNumberType_areOneKey() {
        IdKey one = IdKey.of(new BsonInt32(1));

        assertThat(IdKey.of(new BsonInt64(1))).isEqualTo(one).hasSameHashCodeAs(one);
        assertThat(IdKey.of(new BsonDouble(1.0))).isEqualTo(one).hasSameHashCodeAs(one);
        assertThat(IdKey.of(new BsonDecimal128(Decimal128.parse("1.00"))))
                .isEqualTo(one)
                .hasSameHashCodeAs(one);
        assertThat(IdKey.of(new BsonInt32(2))).isNotEqualTo(one);
    }

    @Test
    void fractionalAndHugeNumbers_compareByExactValue() {
        assertThat(IdKey.of(new BsonDouble(0.5))).isEqualTo(IdKey.of(new BsonDecimal128(Decimal128.parse("0.50"))));
        // The double nearest 0.1 is not the decimal 0.1: the server keeps them apart too.
        assertThat(IdKey.of(new BsonDouble(0.1))).isNotEqualTo(IdKey.of(new BsonDecimal128(Decimal128.parse("0.1"))));
        assertThat(IdKey.of(new BsonDouble(1e19)))
                .isEqualTo(IdKey.of(new BsonDecimal128(new Decimal128(new BigDecimal("10000000000000000000")))));
        assertThat(IdKey.of(new BsonInt64(Long.MAX_VALUE)))
                .isEqualTo(IdKey.of(new BsonDecimal128(new Decimal128(BigDecimal.valueOf(Long.MAX_VALUE)))));
    }

    @Test
    void zerosAndNaNs_areOneKeyEach() {
        assertThat(IdKey.of(new BsonDouble(-0.0))).isEqualTo(IdKey.of(new BsonInt32(0)));
        assertThat(IdKey.of(new BsonDecimal128(Decimal128.NEGATIVE_ZERO))).isEqualTo(IdKey.of(new BsonInt32(0)));
        assertThat(IdKey.of(new BsonDouble(Double.NaN))).isEqualTo(IdKey.of(new BsonDecimal128(Decimal128.NaN)));
        assertThat(IdKey.of(new BsonDouble(Double.POSITIVE_INFINITY)))
                .isEqualTo(IdKey.of(new BsonDecimal128(Decimal128.POSITIVE_INFINITY)))
                .isNotEqualTo(IdKey.of(new BsonDouble(Double.NEGATIVE_INFINITY)));
    }

    @Test
    void embeddedDocumentIds_compareFieldsInOrder() {
        BsonDocument ab = new BsonDocument("a", new BsonInt32(1)).append("b", new BsonInt32(2));
        BsonDocument abLong = new BsonDocument("a", new BsonInt64(1)).append("b", new BsonDouble(2.0));
        BsonDocument ba = new BsonDocument("b", new BsonInt32(2)).append("a", new BsonInt32(1));

        assertThat(IdKey.of(abLong)).isEqualTo(IdKey.of(ab));
        assertThat(IdKey.of(ba)).isNotEqualTo(IdKey.of(ab));
    }

    @Test
    void differentTypes_areDifferentKeys() {
        assertThat(IdKey.of(new BsonString("1"))).isNotEqualTo(IdKey.of(new BsonInt32(1)));
        assertThat(IdKey.of(new BsonArray())).isNotEqualTo(IdKey.of(new BsonDocument()));
        assertThat(IdKey.of(BsonNull.VALUE)).isEqualTo(IdKey.of(BsonNull.VALUE));
        ObjectId objectId = new ObjectId();
        assertThat(IdKey.of(new BsonObjectId(objectId))).isEqualTo(IdKey.of(new BsonObjectId(objectId)));
        assertThat(IdKey.of(new BsonSymbol("abc"))).isEqualTo(IdKey.of(new BsonString("abc")));
    }

    @Test
    void freshKeys_equalNothingButThemselves() {
        IdKey fresh = IdKey.fresh();

        assertThat(fresh).isEqualTo(fresh).isNotEqualTo(IdKey.fresh());
    }
}
