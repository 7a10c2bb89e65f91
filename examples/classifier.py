"""A small classifier with the layers tutorials use: Linear, BatchNorm1d, ReLU,
Dropout, LayerNorm, cross-entropy with label smoothing, Adam, then evaluation without a
graph. Float32 (the default), so its numbers are compared within the float32
tolerance; the dropout masks are the same random numbers in both libraries."""

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
n, features, classes = 96, 8, 3
inputs = torch.randn(n, features)
labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()

model = nn.Sequential(
    # (no bias before BatchNorm: it subtracts the batch mean, so a bias there would get
    # a zero gradient, and Adam would blow its rounding noise up into full steps)
    nn.Linear(features, 16, bias=False),
    nn.BatchNorm1d(16),
    nn.ReLU(),
    nn.Dropout(p=0.2),
    nn.Linear(16, 16),
    nn.LayerNorm(16),
    nn.ReLU(),
    nn.Linear(16, classes),
)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)

for epoch in range(41):
    model.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), labels, label_smoothing=0.1)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0:
        print(epoch, f"{loss.item():.5f}")

model.eval()
with torch.no_grad():
    predicted = model(inputs).argmax(dim=1)
print("accuracy:", f"{(predicted == labels).float().mean().item():.4f}")
norm = model[1]
print("batches tracked:", norm.num_batches_tracked.item())
print("running mean:", [f"{v:.4f}" for v in norm.running_mean[:4].tolist()])
print("loss node:", type(loss.grad_fn).__name__)
