-- Argo CD health of eval-operator's kinds, read from the conditions the
-- operator writes (an EvaluationRun is Healthy once it is judged, whatever
-- its verdict: its Passed condition carries that):
--   Suspended    the object is paused (Ready reason Paused, True or False)
--   Healthy      Ready is True for the current generation
--   Degraded     Stalled is True: the operator needs a person (the message says what);
--                or Synced is False (Metric): the remote Metric differs from the spec
--                and managementPolicies keep the operator from correcting it
--   Progressing  anything else: new, waiting for the operator, or retrying by itself
-- `make manifests` copies this file to each kind's resource_customizations
-- directory and into the Helm chart; edit it here only.
local hs = { status = "Progressing", message = "Waiting for the operator" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end

local ready, stalled, synced
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then
    ready = c
  elseif c.type == "Stalled" then
    stalled = c
  elseif c.type == "Synced" then
    synced = c
  end
end
if ready == nil or ready.reason == "Pending" then
  return hs
end

local function describe(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end

-- A condition written for an older generation says nothing about the current spec.
local generation = obj.metadata.generation or 0
if (ready.observedGeneration or 0) < generation then
  hs.message = "Waiting for the operator to act on generation " .. tostring(generation)
  return hs
end

if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = describe(stalled)
elseif ready.reason == "Paused" then
  hs.status = "Suspended"
  hs.message = describe(ready)
elseif synced ~= nil and synced.status == "False" and (synced.observedGeneration or 0) >= generation then
  hs.status = "Degraded"
  hs.message = describe(synced)
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready)
else
  hs.message = describe(ready)
end
return hs
