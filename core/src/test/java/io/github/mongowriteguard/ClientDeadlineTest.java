package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import io.github.mongowriteguard.WriteGuard.ClientDeadline;
import io.github.mongowriteguard.retry.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The deadline in effect per configured client, as the guard will set it on every write. */
class ClientDeadlineTest {
    private static MongoClientSettings.Builder socketTimeout(int millis) {
        return MongoClientSettings.builder().applyToSocketSettings(s -> s.readTimeout(millis, TimeUnit.MILLISECONDS));
    }

    @Test
    void derivedDeadline_isTwoThirdsOfEachClientsSocketTimeout_inConfigurationOrder() {
        WriteGuard guard = WriteGuard.create();
        guard.configure(socketTimeout(30_000));
        guard.configure(MongoClientSettings.builder());

        assertThat(guard.getClientDeadlines())
                .containsExactly(
                        new ClientDeadline(
                                1, Duration.ofSeconds(30), Duration.ofSeconds(20), "serverDeadlineFraction", ""),
                        new ClientDeadline(2, Duration.ZERO, Duration.ofSeconds(10), "defaultServerDeadline", ""));
    }

    @Test
    void explicitDeadlineAtTheSocketTimeout_isReportedAsTheProblem() {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofSeconds(30))
                .build());
        guard.configure(socketTimeout(30_000));

        ClientDeadline deadline = guard.getClientDeadlines().get(0);
        assertThat(deadline.serverDeadline()).isZero();
        assertThat(deadline.problem()).contains("serverDeadline (30 s) must be below the socket read timeout (30 s)");
    }

    @Test
    void clientSideOperationTimeout_isReportedAsTheProblem() {
        WriteGuard guard = WriteGuard.create();
        guard.configure(socketTimeout(30_000).timeout(5, TimeUnit.SECONDS));

        assertThat(guard.getClientDeadlines().get(0).problem()).contains("timeoutMS (5000)");
    }

    @Test
    void worstCasePerCall_isEveryAttemptToTheSocketTimeout_plusTheLongestBackoffs_andTheGateGraces() {
        RetryPolicy policy = RetryPolicy.builder()
                .maxAttempts(3)
                .initialBackoff(Duration.ofMillis(100))
                .multiplier(2)
                .maxBackoff(Duration.ofSeconds(5))
                .jitter(0.5)
                .gateGrace(Duration.ofMillis(100))
                .build();
        ClientDeadline deadline =
                new ClientDeadline(1, Duration.ofSeconds(30), Duration.ofSeconds(20), "serverDeadlineFraction", "");

        // 3 x 30 s + (150 + 300 ms of backoff at the jitter's longest) + 2 x 100 ms of gate grace
        assertThat(deadline.worstCasePerCall(policy)).contains(Duration.ofMillis(90_650));
        assertThat(new ClientDeadline(1, Duration.ZERO, Duration.ofSeconds(10), "defaultServerDeadline", "")
                        .worstCasePerCall(policy))
                .isEmpty();
    }
}
