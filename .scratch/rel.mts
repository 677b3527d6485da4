import { readFileSync, readdirSync } from "node:fs";
import { createLocalEmbedder } from "../src/adapters/embedding/local-embedder.js";
import { createHeuristicGenerator } from "/work/main/src/adapters/llm/heuristic-generator.js";
import { cosineSimilarity } from "/work/main/src/domain/embedding/hashing-embedding.js";
import { TaskCompletedV1 } from "/work/main/src/domain/contracts/index.js";
const e = createLocalEmbedder({ modelDir: "/work/wt-embed/.services/models/all-minilm-l6-v2" } as never);
const g = createHeuristicGenerator();
const evs = readdirSync("/work/main/examples").filter(f=>f.endsWith(".json")).flatMap(f=>{const j=JSON.parse(readFileSync("/work/main/examples/"+f,"utf8")); return (j.events??[]) as unknown[];}).map(x=>TaskCompletedV1.safeParse(x)).filter(r=>r.success).map(r=>r.data).filter(ev=>ev.outcome!=="success");
const refl = await Promise.all(evs.map(ev=>g.generate({event:ev,attempt:1,violations:[],missingFields:[],insights:[],answerEvaluation:null})));
const taskText=(ev:any)=>[ev.task.description, ev.task.goal, ev.error?.message, ...ev.events.filter((x:any)=>x.type==="error_event"||x.error).map((x:any)=>[x.actor,x.toolName,x.error?.message,x.content.slice(0,2000)].filter(Boolean).join(" "))].filter(Boolean).join("\n");
const tv = await e.embed(evs.map(taskText));
const av = await e.embed(refl.map(r=>r.reflectionText));
const own:number[]=[], other:number[]=[];
for (let i=0;i<evs.length;i++){ own.push(cosineSimilarity(av[i]!,tv[i]!)); for(let j=0;j<evs.length;j++) if(j!==i && evs[j]!.task.description!==evs[i]!.task.description) other.push(cosineSimilarity(av[i]!,tv[j]!)); }
const q=(a:number[],p:number)=>{const s=[...a].sort((x,y)=>x-y); return s[Math.floor(p*(s.length-1))]!.toFixed(2);};
console.log("n",evs.length,"own p10/p50/p90",q(own,.1),q(own,.5),q(own,.9),"other p10/p50/p90",q(other,.1),q(other,.5),q(other,.9));
for (let i=0;i<evs.length;i++) console.log(own[i]!.toFixed(2), evs[i]!.task.description.slice(0,50), "|", refl[i]!.reflectionText.slice(0,80));
