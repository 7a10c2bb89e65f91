"""A custom autograd Function, trained on linspace data: fit a cubic through
a * P3(b + c * x) + d, where P3 is a Legendre polynomial with a hand-written
forward and backward (the idea of PyTorch's "Defining new autograd Functions"
example, written for this course). Float64 throughout: the printed numbers must
be identical under both libraries."""

import math

import torch


class LegendreP3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with its derivative (15x^2 - 3) / 2 by hand."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * x ** 2 - 1)


dtype = torch.float64
device = torch.device("cpu")
torch.manual_seed(1)

x = torch.linspace(-math.pi, math.pi, 500, device=device, dtype=dtype)
y = torch.sin(x)
a, b, c, d = (torch.full((), v, device=device, dtype=dtype, requires_grad=True)
              for v in (0.0, -1.0, 0.0, 0.3))

learning_rate = 2e-5
for step in range(401):
    prediction = a + b * LegendreP3.apply(c + d * x)
    loss = (prediction - y).pow(2).sum()
    if step % 100 == 0:
        print(step, f"{loss.item():.10f}")
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= learning_rate * p.grad
            p.grad = None

# (a and c end within rounding noise of 0, where the last bits depend on the order
# in which each library sums; printed to 12 places, and -0.0 printed as 0.0)
print("fit:", [round(p.item(), 12) + 0.0 for p in (a, b, c, d)])
print("node:", type(prediction.grad_fn.next_functions[1][0].next_functions[1][0]).__name__)
