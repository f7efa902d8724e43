package io.github.mongowriteguard.benchmarks.lab;

import java.math.BigDecimal;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.ser.std.StdSerializer;

/**
 * The lab's {@code --json} output, written by Jackson from the scenarios' maps and lists (key order kept, one line).
 * Decimals are written in their shortest plain form ({@code 110}, not {@code 110.0}; never an exponent), and a
 * non-finite decimal (a median of nothing, a bound that does not apply) as {@code null}: JSON has no NaN.
 */
final class LabJson {
    static final JsonMapper MAPPER = JsonMapper.builder()
            .addModule(new SimpleModule("lab-decimals")
                    .addSerializer(Double.class, new DecimalSerializer<>(Double.class))
                    .addSerializer(Float.class, new DecimalSerializer<>(Float.class)))
            .build();

    private LabJson() {}

    /** One JSON text, on one line. */
    static String write(Object value) {
        return MAPPER.writeValueAsString(value);
    }

    private static final class DecimalSerializer<T extends Number> extends StdSerializer<T> {
        DecimalSerializer(Class<T> type) {
            super(type);
        }

        @Override
        public void serialize(T value, JsonGenerator gen, SerializationContext context) {
            double d = value.doubleValue();
            if (!Double.isFinite(d)) {
                gen.writeNull();
            } else {
                gen.writeNumber(BigDecimal.valueOf(d).stripTrailingZeros().toPlainString());
            }
        }
    }
}
