// The page of `ember board`: one self-contained HTML document (no network,
// no library) that polls the board's JSON endpoints every 2 s for what is
// new (Note [board increments]), draws the chosen runs' curves as SVG and
// tables every run's results and differing hyper-parameters. Run names and
// file contents are untrusted: they reach the page through textContent
// only, never innerHTML.
#include "ember/serve/board.h"

namespace ember::serve {

const char* board_page() {
  return R"EMBERPAGE(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ember board</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;display:flex;color:#222}
#side{width:280px;padding:12px;border-right:1px solid #ddd;height:100vh;overflow:auto;box-sizing:border-box}
#main{flex:1;padding:12px;overflow:auto;height:100vh;box-sizing:border-box}
#runs label{display:block;padding:2px 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.chart{border:1px solid #ddd;padding:4px}
.chart h4{margin:0 0 4px;font-size:13px}
table{border-collapse:collapse;font-size:12px;margin:4px 0 12px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}
#params-table td:nth-child(2),#params-table th:nth-child(2){text-align:left}
#status{color:#888;font-size:12px}
</style></head><body>
<div id="side"><h3>ember board</h3><div id="status">loading</div><div id="runs"></div></div>
<div id="main">
<h3>Runs: results and the hyper-parameters that differ</h3><div id="params"></div>
<h3>Per step</h3><div class="charts" id="steps"></div>
<h3>Per epoch</h3><div class="charts" id="epochs"></div>
<h3>Confusion matrix (test)</h3><div id="confusion"></div>
</div>
<script>
"use strict";
// Note [board increments] (board.cpp): each run's files are kept here and
// only what is new is asked for; a finished run is not asked again, and
// nothing is redrawn unless something changed.
const COLORS=["#1f77b4","#d62728","#2ca02c","#ff7f0e","#9467bd","#8c564b","#e377c2","#7f7f7f","#bcbd22","#17becf"];
const RESULTS=["test_acc","test_f1","test_loss","test_mse","test_mae"];
const MAX_DRAWN=2000;  // points per curve; longer series are thinned for drawing
const state={runs:[],runsText:"",chosen:new Map(),seen:new Set(),files:new Map(),polled:new Map(),sort:{key:"started",dir:1},dirty:true};
function el(tag,attrs,text){const e=document.createElement(tag);for(const k in attrs||{})e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=String(text);return e;}
function svg(tag,attrs){const e=document.createElementNS("http://www.w3.org/2000/svg",tag);for(const k in attrs)e.setAttribute(k,attrs[k]);return e;}
function color(name){const i=state.runs.findIndex(r=>r.run===name);return COLORS[(i<0?0:i)%COLORS.length];}
async function get(path){const r=await fetch(path,{cache:"no-store"});if(!r.ok)throw new Error(path+": "+r.status);return r.json();}
function fmt(v){if(v===null||v===undefined)return "-";if(typeof v!=="number")return String(v);return Math.abs(v)>=1000||Number.isInteger(v)?String(Math.round(v)):v.toPrecision(4);}
function duration(s){if(typeof s!=="number")return "-";if(s<60)return s.toFixed(1)+"s";const t=Math.round(s);return t<3600?Math.floor(t/60)+"m"+String(t%60).padStart(2,"0")+"s":Math.floor(t/3600)+"h"+String(Math.floor(t%3600/60)).padStart(2,"0")+"m";}
function choose(run,on){state.chosen.set(run,on);state.dirty=true;render();}
function drawRuns(){
  const box=document.getElementById("runs");box.replaceChildren();
  for(const r of state.runs){
    const l=el("label",{title:r.run});const c=el("input",{type:"checkbox","data-run":r.run});
    c.checked=state.chosen.get(r.run)!==false;
    c.onchange=()=>choose(r.run,c.checked);
    const sw=el("span",{class:"swatch"});sw.style.background=color(r.run);
    l.append(c,sw,document.createTextNode(r.run+" ("+r.status+", "+r.epoch+"/"+r.epochs+")"));box.append(l);
  }
}
// Every MAX_DRAWN-th point or so, and always the last one.
function thin(points){
  if(points.length<=MAX_DRAWN)return points;
  const step=Math.ceil(points.length/MAX_DRAWN),out=[];
  for(let i=0;i<points.length;i+=step)out.push(points[i]);
  if(out[out.length-1]!==points[points.length-1])out.push(points[points.length-1]);
  return out;
}
// One chart: x = column `x`, y = column `y`, one polyline per chosen run.
function chart(kind,x,y,series){
  const W=380,H=220,L=52,B=24,T=6,R=8;
  let x0=Infinity,x1=-Infinity,y0=Infinity,y1=-Infinity;
  for(const s of series)for(const p of s.points){x0=Math.min(x0,p[0]);x1=Math.max(x1,p[0]);y0=Math.min(y0,p[1]);y1=Math.max(y1,p[1]);}
  const div=el("div",{class:"chart"});div.append(el("h4",{},y));
  const g=svg("svg",{width:W,height:H,"data-chart":kind+":"+y});
  if(x0<=x1){
    if(x1===x0)x1=x0+1;if(y1===y0){y1=y0+Math.abs(y0||1)*0.01;}
    const sx=v=>L+(v-x0)/(x1-x0)*(W-L-R),sy=v=>H-B-(v-y0)/(y1-y0)*(H-B-T);
    g.append(svg("line",{x1:L,y1:H-B,x2:W-R,y2:H-B,stroke:"#999"}),svg("line",{x1:L,y1:T,x2:L,y2:H-B,stroke:"#999"}));
    const lab=(t,a)=>{const e=svg("text",a);e.textContent=t;e.setAttribute("font-size","10");return e;};
    g.append(lab(fmt(y1),{x:2,y:T+8}),lab(fmt(y0),{x:2,y:H-B}),lab(fmt(x0),{x:L,y:H-8}),lab(x+" "+fmt(x1),{x:W-R,y:H-8,"text-anchor":"end"}));
    for(const s of series){
      const pts=thin(s.points).map(p=>sx(p[0]).toFixed(1)+","+sy(p[1]).toFixed(1)).join(" ");
      g.append(svg("polyline",{points:pts,fill:"none",stroke:color(s.run),"stroke-width":1.5,"data-run":s.run,"data-points":s.points.length}));
      if(s.points.length===1){const p=s.points[0];g.append(svg("circle",{cx:sx(p[0]),cy:sy(p[1]),r:2.5,fill:color(s.run)}));}
    }
  }
  div.append(g);return div;
}
// Every numeric column but the x axis (and the bookkeeping ones) gets a chart.
function charts(kind,file,x,skip){
  const box=document.getElementById(kind);box.replaceChildren();
  const cols=[];const series=new Map();
  for(const r of state.runs){
    if(state.chosen.get(r.run)===false)continue;
    const d=(state.files.get(r.run)||{})[file];if(!d)continue;
    const xi=d.columns.indexOf(x);if(xi<0)continue;
    d.columns.forEach((c,ci)=>{
      if(c===x||skip.includes(c))return;
      if(!cols.includes(c))cols.push(c);
      const pts=[];for(const row of d.rows)if(row[xi]!==null&&row[ci]!==null)pts.push([row[xi],row[ci]]);
      if(!series.has(c))series.set(c,[]);series.get(c).push({run:r.run,points:pts});
    });
  }
  for(const c of cols)box.append(chart(kind,x,c,series.get(c)));
}
// Every run, chosen or not (TensorBoard's hparams table): its outcome, test
// results and the config keys that differ between runs; a header sorts by
// its column, a checkbox chooses the run for the charts.
function columns(){
  const cols=[{key:"run",label:"run",value:r=>r.run},{key:"status",label:"status",value:r=>r.status},
    {key:"epoch",label:"epochs",value:r=>r.epoch,text:r=>r.epoch+"/"+r.epochs},
    {key:"best",label:"best",value:r=>r.best,text:r=>r.best===null?"-":(r.monitor?r.monitor+" ":"")+fmt(r.best)},
    {key:"seconds",label:"duration",value:r=>r.seconds,text:r=>duration(r.seconds)}];
  for(const k of RESULTS)if(state.runs.some(r=>r.results&&typeof r.results[k]==="number"))
    cols.push({key:"results."+k,label:k,value:r=>(r.results||{})[k]??null});
  const keys=[...new Set(state.runs.flatMap(r=>Object.keys(r.config||{})))].sort();
  for(const k of keys)cols.push({key:"config."+k,label:k,value:r=>{const v=(r.config||{})[k];const n=Number(v);return v===null||v===undefined?null:v!==""&&isFinite(n)?n:v;},text:r=>fmt((r.config||{})[k])});
  return cols;
}
function sorted(cols){
  const c=cols.find(c=>c.key===state.sort.key);const d=state.sort.dir;
  if(!c)return state.runs.slice();
  return state.runs.slice().sort((a,b)=>{const x=c.value(a),y=c.value(b);
    if(x===null||x===undefined)return y===null||y===undefined?0:1;if(y===null||y===undefined)return -1;
    if(typeof x==="number"&&typeof y==="number")return (x-y)*d;return String(x).localeCompare(String(y))*d;});
}
function params(){
  const box=document.getElementById("params");box.replaceChildren();if(!state.runs.length)return;
  const cols=columns();
  const t=el("table",{id:"params-table"});const h=el("tr");h.append(el("th",{},""));
  for(const c of cols){const th=el("th",{"data-key":c.key},c.label+(state.sort.key===c.key?(state.sort.dir>0?" \u25B2":" \u25BC"):""));
    th.style.cursor="pointer";th.onclick=()=>{state.sort=state.sort.key===c.key?{key:c.key,dir:-state.sort.dir}:{key:c.key,dir:1};state.dirty=true;render();};h.append(th);}
  t.append(h);
  for(const r of (state.sort.key==="started"?state.runs:sorted(cols))){
    const tr=el("tr",{"data-run":r.run});const cb=el("input",{type:"checkbox"});cb.checked=state.chosen.get(r.run)!==false;
    cb.onchange=()=>choose(r.run,cb.checked);const td=el("td");td.append(cb);tr.append(td);
    for(const c of cols){const cell=el("td",{},c.text?c.text(r):fmt(c.value(r)));if(c.key==="run")cell.style.color=color(r.run);tr.append(cell);}
    t.append(tr);
  }
  box.append(t);
}
function confusion(){
  const box=document.getElementById("confusion");box.replaceChildren();
  for(const r of state.runs){
    if(state.chosen.get(r.run)===false)continue;
    const c=((state.files.get(r.run)||{}).confusion||{}).value;if(!c||!Array.isArray(c.matrix))continue;
    box.append(el("h4",{},r.run));
    const names=Array.isArray(c.classes)&&c.classes.length===c.matrix.length?c.classes:c.matrix.map((_,i)=>String(i));
    const t=el("table",{"data-confusion":r.run});const h=el("tr");h.append(el("th",{},"true \\ predicted"));
    for(const n of names)h.append(el("th",{},n));t.append(h);
    let max=1;for(const row of c.matrix)if(Array.isArray(row))for(const v of row)max=Math.max(max,Number(v)||0);
    c.matrix.forEach((row,i)=>{if(!Array.isArray(row))return;const tr=el("tr");tr.append(el("th",{},names[i]));
      for(const v of row){const td=el("td",{},v);td.style.background="rgba(31,119,180,"+((Number(v)||0)/max*0.8).toFixed(3)+")";tr.append(td);}t.append(tr);});
    box.append(t);
  }
}
function render(){
  if(!state.dirty)return;state.dirty=false;
  drawRuns();params();charts("steps","steps","step",["epoch","batch"]);charts("epochs","metrics","epoch",[]);confusion();
}
// The rows of a run's CSV file written since the last call (all of them
// the first time, or when the file was replaced); true when any came.
async function pullCsv(run,what){
  const files=state.files.get(run);const f=files[what]||(files[what]={id:"",next:0,columns:[],rows:[]});
  let changed=false;
  for(let more=true,i=0;more&&i<64;++i){
    const d=await get("/api/"+what+"?run="+encodeURIComponent(run)+"&id="+encodeURIComponent(f.id)+"&from="+f.next);
    if(!d.append){f.rows=[];changed=changed||f.id!==d.id||d.rows.length>0;}
    for(const row of d.rows)f.rows.push(row);
    changed=changed||d.rows.length>0;
    f.id=d.id;f.next=d.next;f.columns=d.columns;more=d.more;
  }
  return changed;
}
async function pullConfusion(run){
  const files=state.files.get(run);const c=files.confusion||(files.confusion={id:"",value:null});
  const d=await get("/api/confusion?run="+encodeURIComponent(run)+"&id="+encodeURIComponent(c.id));
  if(d.unchanged)return false;
  c.id=d.id;c.value=d.confusion;return true;
}
async function poll(){
  try{
    const text=JSON.stringify(await get("/api/runs"));
    if(text!==state.runsText){state.runsText=text;state.runs=JSON.parse(text);state.dirty=true;}
    for(const r of state.runs)if(!state.seen.has(r.run)){state.seen.add(r.run);state.chosen.set(r.run,true);}
    await Promise.all(state.runs.filter(r=>state.chosen.get(r.run)!==false).map(async r=>{
      // A run that is not running and was read since its status last changed has nothing new.
      const key=r.status+"/"+r.epoch+"/"+r.best+"/"+r.seconds;
      if(r.status!=="running"&&state.polled.get(r.run)===key)return;
      if(!state.files.has(r.run))state.files.set(r.run,{});
      const changed=await Promise.all([pullCsv(r.run,"steps"),pullCsv(r.run,"metrics"),pullConfusion(r.run)]);
      if(changed.some(c=>c))state.dirty=true;
      state.polled.set(r.run,key);
    }));
    render();
    document.getElementById("status").textContent=state.runs.length+" runs, updated "+new Date().toLocaleTimeString();
  }catch(e){document.getElementById("status").textContent="error: "+e.message;}
  setTimeout(poll,2000);
}
poll();
</script></body></html>
)EMBERPAGE";
}

}  // namespace ember::serve
