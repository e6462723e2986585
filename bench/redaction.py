"""The redaction detector (core.sensitive) on a synthetic corpus (bench/redaction_corpus.py), in process:

1. Recall per kind: of the sensitive values placed in 2,000 transcripts (every kind in every written and spoken
   form, split over turns), the share of which no part survives redaction. Goals: card_number and government_id
   >= 99.5%, every other kind >= 98%.
2. False positives: the share of distractors (order and confirmation numbers, prices, times, quantities, booking
   dates, zip codes, the organization's own number) that redaction touched. Goal <= 0.5%.
3. Cost on a completion: the redaction a 60-turn completion runs (transcript, quality-check quotes, summary,
   messages, call fields), p50 and p99 of the process's CPU time (a shared machine's wall clock mostly measures
   the wait for a core; its p50 is printed beside), with the default kinds and with every kind. Goal p50 < 5 ms.

Every kind is on for 1 and 2. `BENCH_REDACTION_CALLS` changes the corpus size, `BENCH_REDACTION_SEED` its seed.
"""

import os
import random
import statistics
import time
from collections import Counter

from bench.redaction_corpus import DISTRACTOR_FORMS, KIND_FORMS, ORG_NUMBER, corpus
from core.sensitive import DEFAULT_KINDS, KINDS, Policy, Redactor

CALLS = int(os.environ.get("BENCH_REDACTION_CALLS", 2000))
SEED = int(os.environ.get("BENCH_REDACTION_SEED", 36))
GOALS = {"card_number": 0.995, "government_id": 0.995}
ROUNDS = 200


def _survives(part: str, text: str) -> bool:
    return part.lower() in text.lower()


def quality(samples) -> tuple[dict, dict, dict, dict]:
    policy = Policy(kinds=frozenset(KINDS), region="US", published=frozenset({ORG_NUMBER}))
    caught, placed, touched, shown = Counter(), Counter(), Counter(), Counter()
    for sample in samples:
        scan = Redactor(policy).scan(sample.turns)
        out = [scan.text(index) for index in range(len(sample.turns))]
        for secret in sample.secrets:
            window = "\n".join(out[secret.first_turn:secret.first_turn + len(secret.turns)])
            placed[(secret.kind, secret.form)] += 1
            caught[(secret.kind, secret.form)] += not any(_survives(part, window) for part in secret.parts)
        for distractor in sample.distractors:
            window = "\n".join(out[distractor.first_turn:distractor.first_turn + len(distractor.turns)])
            shown[distractor.form] += 1
            touched[distractor.form] += not all(keep in window for keep in distractor.keep)
    return caught, placed, touched, shown


def _sixty_turns(samples, rng: random.Random) -> list[tuple[str, str]]:
    turns: list[tuple[str, str]] = []
    while len(turns) < 60:
        turns.extend(rng.choice(samples).turns)
    return turns[:60]


def _completion(policy: Policy, turns: list[tuple[str, str]]) -> None:
    """What calls.services.lifecycle.call_complete redacts for a completion of these turns."""
    redactor = Redactor(policy)
    scan = redactor.scan(turns)
    [scan.text(index) for index in range(len(turns))]
    [scan.quote(text) for speaker, text in turns[::6]]  # ten quoted pieces of evidence
    redactor.text("The caller ordered two large pizzas for pickup at 6:30 and paid by card.")
    redactor.text("Please call back about the catering order for Saturday.")


def cost(samples) -> dict:
    rng = random.Random(SEED)
    transcripts = [_sixty_turns(samples, rng) for _ in range(ROUNDS)]
    figures = {}
    for name, kinds in (("default kinds", DEFAULT_KINDS), ("every kind", KINDS)):
        policy = Policy(kinds=frozenset(kinds), region="US", published=frozenset({ORG_NUMBER}))
        _completion(policy, transcripts[0])  # warm: regexes compiled, modules loaded
        cpu, wall = [], []
        for turns in transcripts:
            start, started = time.process_time(), time.perf_counter()
            _completion(policy, turns)
            cpu.append((time.process_time() - start) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
        cpu.sort()
        figures[name] = (statistics.median(cpu), cpu[int(len(cpu) * 0.99) - 1], statistics.median(wall))
    return figures


def main() -> None:
    samples = corpus(CALLS, seed=SEED)
    caught, placed, touched, shown = quality(samples)
    print(f"corpus: {len(samples)} transcripts, {sum(placed.values())} sensitive values, "
          f"{sum(shown.values())} distractors (seed {SEED})")
    print(f"{'kind':<16} {'recall':>8} {'caught':>8} {'goal':>7}")
    met = True
    for kind in KIND_FORMS:
        got = sum(caught[(kind, form)] for form in KIND_FORMS[kind])
        total = sum(placed[(kind, form)] for form in KIND_FORMS[kind])
        goal = GOALS.get(kind, 0.98)
        met &= got / total >= goal
        print(f"{kind:<16} {got / total:>8.2%} {got:>4}/{total:<4} {goal:>6.1%}")
        for form in KIND_FORMS[kind]:
            if caught[(kind, form)] < placed[(kind, form)]:
                print(f"  missed {placed[(kind, form)] - caught[(kind, form)]} of {placed[(kind, form)]} in {form}")
    rate = sum(touched.values()) / sum(shown.values())
    met &= rate <= 0.005
    print(f"distractors touched: {rate:.2%} ({sum(touched.values())}/{sum(shown.values())}); goal <= 0.5%")
    for form in DISTRACTOR_FORMS:
        if touched[form]:
            print(f"  {form}: {touched[form]} of {shown[form]}")
    for name, (p50, p99, wall) in cost(samples).items():
        met &= p50 < 5
        print(f"redaction of a 60-turn completion, {name}: CPU p50 {p50:.2f} ms, p99 {p99:.2f} ms "
              f"(wall-clock p50 {wall:.2f} ms on this machine's load); goal p50 < 5 ms")
    print("every goal met" if met else "GOAL MISSED")


if __name__ == "__main__":
    main()
