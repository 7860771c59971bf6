#!/usr/bin/python3
"""Generates a small synthetic review data set (label<TAB>text per line) for
the text models of the zoo: deterministic, no downloads. A review is
positive when it holds more positive than negative words; "not" flips the
word after it, so order matters and a bag of words is not enough."""
import random

POS = "good great excellent lovely superb pleasant delightful wonderful solid charming".split()
NEG = "bad awful terrible poor boring dull horrible weak clumsy dreadful".split()
FILLER = ("the a this that movie film plot actor story scene music camera ending "
          "was is it and but with very quite really rather some of in on").split()


def review(rng):
    words, score = [], 0
    for _ in range(rng.randint(4, 40)):
        r = rng.random()
        if r < 0.22:
            negate = rng.random() < 0.25
            positive = rng.random() < 0.5
            if negate:
                words.append("not")
            words.append(rng.choice(POS if positive else NEG))
            score += (1 if positive else -1) * (-1 if negate else 1)
        else:
            words.append(rng.choice(FILLER))
    if score == 0:  # break ties with one more opinion
        positive = rng.random() < 0.5
        words.append(rng.choice(POS if positive else NEG))
        score = 1 if positive else -1
    return ("pos" if score > 0 else "neg"), " ".join(words)


def write(path, n, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            label, text = review(rng)
            f.write(f"{label}\t{text}\n")


if __name__ == "__main__":
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    write(os.path.join(here, "reviews_train.tsv"), 3000, 1)
    write(os.path.join(here, "reviews_test.tsv"), 600, 2)
