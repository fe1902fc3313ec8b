-- Argo CD health of a karpgate RolloutPlan (karpgate.io/v1alpha1).
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for karpgate to judge the plan"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for karpgate to judge the latest spec"
  return hs
end
local ready = nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Stalled" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = c.reason .. ": " .. c.message
    return hs
  end
  if c.type == "Ready" then
    ready = c
  end
end
if obj.status.phase == "Paused" then
  hs.status = "Suspended"
  hs.message = ready ~= nil and ready.message or "Paused"
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
  return hs
end
hs.status = "Progressing"
hs.message = ready ~= nil and ready.message or "Rolling"
return hs
