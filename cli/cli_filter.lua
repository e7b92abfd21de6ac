-- SPDX-License-Identifier: BSD-3-Clause
--
-- cli_filter.lua - makes `srun --treematch=profile.yml` choose the node of
-- every rank from the profile, transparently, inside an allocation.
--
-- Slurm decides which node each rank of a step goes to before any SPANK hook
-- runs, so the treematch.so plugin alone can only arrange ranks inside each
-- node. A cli_filter runs in srun after the options are parsed and before
-- the step is requested, and may change them: when srun has --treematch and
-- runs inside an allocation, this filter asks `treematch layout` for the
-- node of every rank and sets srun's node list (one entry per rank, in rank
-- order) and --distribution=arbitrary, which Slurm 22.05 and later obey,
-- and the step's compiled plan (TREEMATCH_PLAN in the step's environment):
-- each node's plugin then reads only its own slice of it, as with
-- treematch-srun(1). treematch.so binds the ranks inside each node.
--
-- Every --treematch value is read as the plugin reads it, by `treematch
-- layout --treematch VALUE`: a profile (and its options), options alone
-- (the site's default profile, for steps of its size), learn (the profile
-- stored for the step's MPI program at this task count; nothing stored yet:
-- the step is recorded, not laid out), off and help (nothing to do).
--
-- Install (admin): copy /usr/share/slurm-treematch/cli_filter.lua to the
-- directory of slurm.conf as cli_filter.lua (or call
-- treematch_cli_filter(options) from your own slurm_cli_pre_submit), and
-- add to slurm.conf:
--     CliFilterPlugins=cli_filter/lua
--
-- It never blocks a job: with no --treematch, outside an allocation (the
-- nodes are not known yet), with the user's own --nodelist or
-- --distribution, or when `treematch layout` fails, srun's options are left
-- as they are (a message says why when something was expected to happen).
-- The plan goes beside the profile (or in the store, learning), named for
-- this srun; the plugin removes it when srun ends. Users without this
-- filter can run treematch-srun(1) instead.

-- The treematch command; "treematch" means the one on PATH.
local TREEMATCH = os.getenv("TREEMATCH") or "treematch"

local function shell_quote(s)
	return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end

-- The --treematch value: Slurm puts SPANK options only in the JSON form of
-- the options ("spank:treematch" in 22.05+, "spank:<plugin>:treematch" before).
local function treematch_option(options)
	local ok, json = pcall(slurm.json_cli_options, options)
	if not ok or json == nil then
		return nil
	end
	local v = string.match(json, '"spank:treematch":"(.-[^\\])"')
		or string.match(json, '"spank:[^":]*:treematch":"(.-[^\\])"')
	if v == nil then
		return nil
	end
	v = string.gsub(v, "\\/", "/")
	v = string.gsub(v, '\\"', '"')
	v = string.gsub(v, "\\\\", "\\")
	return v
end

-- A word of the shell command line, quoted.
local function words(list)
	local out = {}
	for _, w in ipairs(list) do
		table.insert(out, shell_quote(w))
	end
	return table.concat(out, " ")
end

function treematch_cli_filter(options)
	local value = treematch_option(options)
	if value == nil or value == "" then
		return slurm.SUCCESS
	end
	-- off and help: nothing to place (help has exited already)
	local first = string.match(value, "^([^,]*)")
	if first == "off" or first == "help" then
		return slurm.SUCCESS
	end
	if os.getenv("SLURM_JOB_NODELIST") == nil then
		return slurm.SUCCESS -- srun creating its own allocation: nodes unknown
	end
	if options["distribution"] == "arbitrary" and os.getenv("SLURM_HOSTFILE") ~= nil then
		return slurm.SUCCESS -- a layout is given already (treematch-srun)
	end
	if options["nodelist"] ~= nil or options["distribution"] ~= nil then
		slurm.log_info("treematch: your --nodelist/--distribution decide the nodes; " ..
			"the communication-aware node layout is not applied")
		return slurm.SUCCESS
	end
	-- `treematch layout` reads the value as the plugin does (the site's
	-- default profile, learn mode's stored profile for the step's program)
	-- and writes the step's plan under the name srun's plugin removes when
	-- this srun ($PPID of the shell popen starts) ends.
	local cmd = shell_quote(TREEMATCH) .. " layout --treematch " .. shell_quote(value) ..
		' --srun-pid "$PPID"'
	-- unset numeric options read as nil, 0 or negative (Slurm's NO_VAL)
	local ntasks = tonumber(options["ntasks"] or "")
	local per_node = tonumber(options["ntasks-per-node"] or "")
	if ntasks ~= nil and ntasks > 0 then
		cmd = cmd .. " --ntasks " .. ntasks
	end
	if per_node ~= nil and per_node > 0 then
		cmd = cmd .. " --tasks-per-node " .. per_node
	end
	local argv = options["argv"]
	if type(argv) == "table" and #argv > 0 then
		cmd = cmd .. " -- " .. words(argv)
	end
	local pipe = io.popen(cmd .. " 2>&1; echo \"treematch-rc=$?\"")
	if pipe == nil then
		slurm.log_error("treematch: cannot run %s: node layout not applied", TREEMATCH)
		return slurm.SUCCESS
	end
	local hosts, seen, nnodes, rc, messages, plan = {}, {}, 0, nil, {}, nil
	for line in pipe:lines() do
		local code = string.match(line, "^treematch%-rc=(%d+)$")
		local p = string.match(line, "^treematch%-plan=(.+)$")
		if code ~= nil then
			rc = tonumber(code)
		elseif p ~= nil then
			plan = p
		elseif string.match(line, "^treematch: ") then
			table.insert(messages, line)
		elseif line ~= "" then
			table.insert(hosts, line)
			if not seen[line] then
				seen[line] = true
				nnodes = nnodes + 1
			end
		end
	end
	pipe:close()
	if rc == 0 and #hosts == 0 then
		-- nothing to lay out (learning, a site default of another size)
		slurm.log_verbose("%s", table.concat(messages, "; "))
		return slurm.SUCCESS
	end
	if rc ~= 0 or #hosts == 0 then
		slurm.log_error("treematch: node layout not applied (Slurm's layout is used): %s",
			table.concat(messages, "; "))
		return slurm.SUCCESS
	end
	options["nodelist"] = table.concat(hosts, ",")
	options["distribution"] = "arbitrary"
	options["ntasks"] = tostring(#hosts)
	options["nodes"] = tostring(nnodes)
	if plan ~= nil then
		-- each node reads its own slice of the step's plan
		local export = options["export"]
		if export == nil or export == "" then
			export = "ALL"
		end
		options["export"] = export .. ",TREEMATCH_PLAN=" .. plan
	end
	slurm.log_verbose("treematch: %d ranks laid out on %d nodes%s", #hosts, nnodes,
		plan and (", plan " .. plan) or "")
	return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, pack_offset)
	return treematch_cli_filter(options)
end

function slurm_cli_post_submit(offset, jobid, stepid)
	return slurm.SUCCESS
end
