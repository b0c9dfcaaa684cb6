# The Python program the python-markers case traces: plain calls, a
# recursion, a class, a raised and caught exception, a generator.
def leaf(n):
    return n + 1


def mid(n):
    if n % 2:
        return leaf(n)
    return leaf(leaf(n))


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


def boom():
    raise ValueError("boom")


def count(n):
    for i in range(n):
        yield i


total = 0
for i in range(2):
    total += mid(i)
total += fact(3)
try:
    boom()
except ValueError:
    total += Box(5).get()
total += sum(count(2))
print("total", total)
