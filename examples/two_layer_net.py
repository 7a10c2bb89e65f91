"""A two-layer network with nn and optim, in float32 (the default dtype): the loss
curve of a small regression, the layers' gradients and the optimizer's state.
Float32 matrix products differ in their last bits between the two libraries'
BLAS, so this script's numbers are compared within the stated float32 tolerance."""

import torch
from torch import nn

torch.manual_seed(0)

inputs = torch.randn(64, 10)
targets = torch.randn(64, 2)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

print(model)
for step in range(201):
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(step, f"{loss.item():.6f}")

first = model[0]
print("weight grad norm:", f"{first.weight.grad.pow(2).sum().sqrt().item():.6f}")
print("bias grad mean:", f"{first.bias.grad.mean().item():.6f}")
print("state steps:", [optimizer.state[p]["step"].item() for p in model.parameters()])
print("param versions:", [p._version for p in model.parameters()])
