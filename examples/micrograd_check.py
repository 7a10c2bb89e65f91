"""Checking a scalar autograd engine against PyTorch, as micrograd's own tests do: a
small expression of one value and a longer one with powers and divisions, built with
the legacy `torch.Tensor([...]).double()` constructor. Float64: identical output."""

import torch

x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
print("y:", y.data.item(), "dy/dx:", x.grad.item())

a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b ** 3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e ** 2
g = f / 2.0
g = g + 10.0 / f
g.backward()
print("g:", f"{g.data.item():.12f}")
print("dg/da:", f"{a.grad.item():.12f}", "dg/db:", f"{b.grad.item():.12f}")
print("g.grad_fn:", type(g.grad_fn).__name__, "f.grad_fn:", type(f.grad_fn).__name__)
